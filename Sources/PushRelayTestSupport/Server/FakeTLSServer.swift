import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushRelayCore
import Synchronization

/// A loopback HTTPS server for the fakes: TLS with a certificate from a `TestCertificateAuthority`, HTTP/2 via ALPN
/// (and HTTP/1.1 when `allowHTTP1`), every request handed complete to a synchronous `handler`.
///
/// The handler runs on the connection's event loop; it must be quick and thread-safe.
final class FakeTLSServer: Sendable {
    typealias Handler = @Sendable (FakeRequest) -> FakeResponse

    private let group: MultiThreadedEventLoopGroup
    private let sslContext: NIOSSLContext
    private let allowHTTP1: Bool
    private let handler: Handler
    private let channel = Locked<(any Channel)?>(nil)
    private let connections = ConnectionCounter()
    /// What the HTTP/2 connections do besides answering (`FakeFrontEnd`).
    let frontEnd: FakeFrontEnd

    /// - Parameters:
    ///   - clientCA: when set, clients must present a certificate issued by it (mutual TLS).
    ///   - offerHTTP2: false for a server that speaks only HTTP/1.1 (ALPN `http/1.1`; then `allowHTTP1` must be true).
    init(
        identity: TestCertificateAuthority.Issued,
        clientCA: TestCertificateAuthority?,
        allowHTTP1: Bool,
        offerHTTP2: Bool = true,
        frontEnd: FakeFrontEnd = FakeFrontEnd(),
        handler: @escaping Handler
    ) throws {
        self.frontEnd = frontEnd
        let (chain, key) = try identity.nioIdentity()
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.applicationProtocols = (offerHTTP2 ? ["h2"] : []) + (allowHTTP1 ? ["http/1.1"] : [])
        if let clientCA {
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([try clientCA.nioCertificate()])
        }
        sslContext = try NIOSSLContext(configuration: tls)
        self.allowHTTP1 = allowHTTP1
        self.handler = handler
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// How many TCP connections were accepted so far.
    var acceptedConnections: Int { connections.value.load(ordering: .relaxed) }

    /// Binds `host:port` (port 0 picks a free one) and returns the bound port.
    func start(host: String, port: Int) async throws -> Int {
        let sslContext = self.sslContext
        let allowHTTP1 = self.allowHTTP1
        let handler = self.handler
        let connections = self.connections
        let frontEnd = self.frontEnd
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let connectionID = connections.value.add(1, ordering: .relaxed).newValue
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            frontEnd.opened(connectionID: connectionID, parent: channel)
                            var configuration = NIOHTTP2Handler.ConnectionConfiguration()
                            configuration.initialSettings = frontEnd.initialSettings
                            return channel.configureHTTP2Pipeline(
                                mode: .server,
                                connectionConfiguration: configuration,
                                streamConfiguration: .init()
                            ) { stream in
                                stream.eventLoop.makeCompletedFuture {
                                    try stream.pipeline.syncOperations.addHandlers([
                                        HTTP2FramePayloadToHTTP1ServerCodec(),
                                        FakeRequestHandler(
                                            connectionID: connectionID,
                                            handler: handler,
                                            closesConnectionChannel: true,
                                            frontEnd: frontEnd
                                        ),
                                    ])
                                }
                            }.map { _ in }
                        },
                        http1ChannelConfigurator: { channel in
                            guard allowHTTP1 else { return channel.close() }
                            return channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                                try channel.pipeline.syncOperations.addHandler(
                                    FakeRequestHandler(connectionID: connectionID, handler: handler, closesConnectionChannel: false)
                                )
                            }
                        }
                    )
                }
            }
        let bound = try await bootstrap.bind(host: host, port: port).get()
        channel.withLock { $0 = bound }
        guard let port = bound.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return port
    }

    func shutdown() async {
        let bound = channel.withLock { c -> (any Channel)? in
            let current = c
            c = nil
            return current
        }
        try? await bound?.close()
        try? await group.shutdownGracefully()
    }
}

/// Numbers accepted connections (a class, so the channel initializer can capture it).
final class ConnectionCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// Collects one request (head, body, end), asks the handler, writes the answer (after its delay).
final class FakeRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bodies beyond this are truncated (the fakes' limits are a few KiB).
    static let maxBody = 1 << 20

    private let connectionID: Int
    private let handler: FakeTLSServer.Handler
    /// HTTP/2 streams drop the parent (the TCP connection); HTTP/1.1 closes its own channel.
    private let closesConnectionChannel: Bool
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// On HTTP/2 streams: what the front end does before and after the fake answers.
    private let frontEnd: FakeFrontEnd?

    init(connectionID: Int, handler: @escaping FakeTLSServer.Handler, closesConnectionChannel: Bool, frontEnd: FakeFrontEnd? = nil) {
        self.connectionID = connectionID
        self.handler = handler
        self.closesConnectionChannel = closesConnectionChannel
        self.frontEnd = frontEnd
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = []
        case .body(let buffer):
            if body.count < Self.maxBody { body += buffer.readableBytesView.prefix(Self.maxBody - body.count) }
        case .end:
            guard let head else { return }
            self.head = nil
            var admission = FakeFrontEnd.Admission.process
            var lastStreamID = 0
            let parent = context.channel.parent
            let streamID = frontEnd == nil ? nil : try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            if let frontEnd, let streamID {
                (admission, lastStreamID) = frontEnd.admit(connectionID: connectionID, streamID: Int(streamID))
            }
            switch admission {
            case .refuse, .ignore:
                // Not processed: the handler never sees it.
                if let parent, let streamID {
                    parent.writeAndFlush(HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream)), promise: nil)
                }
                return
            case .process, .processThenGoAway, .resetAfterProcessing:
                break
            }
            let request = FakeRequest(
                connectionID: connectionID,
                method: head.method.rawValue,
                path: head.uri,
                headerFields: head.headers.map { (name: $0.name.lowercased(), value: $0.value) },
                body: body
            )
            let response = handler(request)
            if admission == .resetAfterProcessing, let parent, let streamID {
                parent.writeAndFlush(HTTP2Frame(streamID: streamID, payload: .rstStream(.internalError)), promise: nil)
                return
            }
            if admission == .processThenGoAway, let parent, let streamID, let frontEnd {
                // After this answer is written: streams up to this one finish, later ones were not processed.
                let knobs = frontEnd.knobs
                let closeAfter = knobs.goAwayCloseAfter
                context.eventLoop.assumeIsolated().execute {
                    let goAway = HTTP2Frame(
                        streamID: .rootStream,
                        payload: .goAway(
                            lastStreamID: HTTP2StreamID(lastStreamID),
                            errorCode: knobs.goAwayError?.code ?? .noError,
                            opaqueData: knobs.goAwayError.map { parent.allocator.buffer(string: $0.debugData) }
                        )
                    )
                    parent.writeAndFlush(goAway, promise: nil)
                    parent.eventLoop.scheduleTask(in: closeAfter) { parent.close(promise: nil) }
                }
            }
            if let delay = response.delay {
                context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    self.finish(response, context: context)
                }
            } else {
                finish(response, context: context)
            }
        }
    }

    private func finish(_ response: FakeResponse, context: ChannelHandlerContext) {
        switch response.action {
        case .dropConnection:
            if closesConnectionChannel, let parent = context.channel.parent {
                parent.close(promise: nil)
            } else {
                context.close(promise: nil)
            }
        case .resetStream:
            // On HTTP/2 closing the stream's channel resets the stream; on HTTP/1.1 the connection closes.
            context.close(promise: nil)
        case .goAway:
            guard closesConnectionChannel, let parent = context.channel.parent else {
                context.close(promise: nil)
                return
            }
            let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
            parent.writeAndFlush(goAway).whenComplete { _ in parent.close(promise: nil) }
        case .respond:
            var headers = HTTPHeaders(response.headers)
            headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
            let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
