import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// One TLS connection to a provider that speaks HTTP/2 (ALPN `h2`), carrying many requests at once.
///
/// `connect` opens it; `execute` sends a request as a new stream, from the connection's event loop directly, from
/// anywhere else with one hop to it.
/// Once the server sends GOAWAY, the connection closes or the stream IDs run out, `isUsable` turns false and the pool
/// opens another; requests already on it still finish.
final class UpstreamHTTP2Connection: Sendable {
    /// Why a connection could not be opened.
    enum ConnectError: Error {
        /// The server finished the TLS handshake without choosing HTTP/2: use HTTP/1.1 for this origin.
        case http2NotOffered
        /// TCP connect, TLS handshake and the HTTP/2 preface took longer than allowed.
        case timedOut
    }

    let channel: any Channel
    private let handler: NIOLoopBound<UpstreamHTTP2Handler>
    private let usable: UsableFlag

    private init(channel: any Channel, handler: UpstreamHTTP2Handler, usable: UsableFlag) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.usable = usable
    }

    /// False once the connection takes no new requests.
    var isUsable: Bool { usable.value.load(ordering: .relaxed) }

    /// Sends `request` on a new stream. The future fails with `UpstreamHTTP2StateMachine.Failure` when no answer came.
    func execute(_ request: UpstreamRequest, deadline: NIODeadline) -> EventLoopFuture<UpstreamResponse> {
        let promise = channel.eventLoop.makePromise(of: UpstreamResponse.self)
        let handler = self.handler
        if channel.eventLoop.inEventLoop {
            handler.value.start(request, deadline: deadline, promise: promise)
        } else {
            channel.eventLoop.execute { handler.value.start(request, deadline: deadline, promise: promise) }
        }
        return promise.futureResult
    }

    func close() {
        usable.value.store(false, ordering: .relaxed)
        channel.close(promise: nil)
    }

    /// Opens a connection to `origin` (TCP, TLS with ALPN `h2`, HTTP/2 preface) on `eventLoop`, within `timeout`; at the
    /// first of `addresses` when there are any, else wherever the origin's host resolves to.
    static func connect(
        to origin: UpstreamOrigin,
        at addresses: [SocketAddress] = [],
        tls: NIOSSLContext,
        eventLoop: any EventLoop,
        timeout: TimeAmount,
        idleTimeout: TimeAmount
    ) -> EventLoopFuture<UpstreamHTTP2Connection> {
        let ready = eventLoop.makePromise(of: UpstreamHTTP2Connection.self)
        let usable = UsableFlag()
        // SNI carries names only; for an IP address NIOSSL checks the certificate against the peer's address.
        let serverName = (try? SocketAddress(ipAddress: origin.host, port: 0)) == nil ? origin.host : nil
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    // A failed handshake (an untrusted certificate, say) fails the connection with its own error.
                    try sync.addHandler(ConnectFailureHandler(ready: ready))
                    try sync.addHandler(
                        ApplicationProtocolNegotiationHandler { result, channel in
                            guard case .negotiated("h2") = result else {
                                ready.fail(ConnectError.http2NotOffered)
                                return channel.close()
                            }
                            return channel.eventLoop.makeCompletedFuture {
                                let handler = UpstreamHTTP2Handler(idleTimeout: idleTimeout) {
                                    usable.value.store(false, ordering: .relaxed)
                                }
                                let sync = channel.pipeline.syncOperations
                                try sync.addHandler(NIOHTTP2Handler(mode: .client, initialSettings: Self.settings))
                                try sync.addHandler(handler)
                                ready.succeed(UpstreamHTTP2Connection(channel: channel, handler: handler, usable: usable))
                            }
                        }
                    )
                }
            }
        let timer = eventLoop.scheduleTask(in: timeout) { ready.fail(ConnectError.timedOut) }
        UpstreamOrigin.connect(bootstrap, to: origin, at: addresses).whenComplete { result in
            switch result {
            case .success(let channel):
                // A handshake that fails or is cut closes the channel before ALPN answered.
                channel.closeFuture.whenComplete { _ in ready.fail(UpstreamStreamFailure.connectionClosed) }
                ready.futureResult.whenFailure { _ in channel.close(promise: nil) }
            case .failure(let error):
                ready.fail(error)
            }
        }
        ready.futureResult.whenComplete { _ in timer.cancel() }
        return ready.futureResult
    }

    /// What this client tells the server: no server push, and stream windows large enough for any provider answer.
    static let settings: HTTP2Settings = [
        HTTP2Setting(parameter: .enablePush, value: 0),
        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
    ]
}
