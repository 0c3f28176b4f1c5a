import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import PushRelayCore
import Synchronization

/// The server's connections: HTTP/1.1 for every route, and the websocket push channel at `/api/websocket` served by
/// event-driven NIO handlers.
///
/// Why not HummingbirdWebSocket's handler: it keeps one Swift task (and child tasks) alive per websocket for the
/// connection's whole life, and their task-allocator slabs stay held while the connection idles (the memory figures
/// are in `Benchmarks/README.md`). Here the connection task ends once
/// the upgrade is done; an idle channel is a NIO channel, its handlers and a `LocalPushConnection`, and a message
/// starts a short task only while it is being handled.
struct PushRelayHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    enum Upgrade: Sendable {
        case websocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// A websocket upgrade that is refused: answered with this error, then the connection closes.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, APIError)
    }

    struct Value: ServerChildChannelValue {
        let upgrade: EventLoopFuture<Upgrade>
        let channel: any Channel
    }

    static let path = "/api/websocket"

    let responder: HTTPChannelHandler.Responder
    let sockets: LocalPushSockets
    /// Home Assistant's notify POSTs, answered in the pipeline (`HomeAssistantFastPath`).
    let notify: HomeAssistantFastPath.Endpoint?
    /// Time limits for slow clients (`SlowClientGuard`); nil: none.
    let slowClients: SlowClientGuard.Settings?
    /// Connections per client address (`http.max_connections_per_address`); nil: no limit.
    let connections: ConnectionBudget?

    init(
        responder: @escaping HTTPChannelHandler.Responder,
        sockets: LocalPushSockets,
        notify: HomeAssistantFastPath.Endpoint? = nil,
        slowClients: SlowClientGuard.Settings? = nil,
        connections: ConnectionBudget? = nil
    ) {
        self.responder = Self.redirectingLateUpgrades(responder)
        self.sockets = sockets
        self.notify = notify
        self.slowClients = slowClients
        self.connections = connections
    }

    /// A connection refused for its address's budget.
    struct TooManyConnections: Error {}

    /// Answers a connection beyond its address's budget with a JSON 503 as soon as it is active, then closes it.
    final class ConnectionRefusal: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let limit: Int
        private let answered: EventLoopPromise<Upgrade>
        private var sent = false

        init(limit: Int, answered: EventLoopPromise<Upgrade>) {
            self.limit = limit
            self.answered = answered
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { refuse(context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            refuse(context)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

        private func refuse(_ context: ChannelHandlerContext) {
            guard !sent else { return }
            sent = true
            let error = APIError(
                .serviceUnavailable,
                "TooManyConnections",
                "This address already holds \(limit) connections to PushRelay (http.max_connections_per_address); reuse them or try again later.",
                headers: [.retryAfter: "5"]
            )
            let buffer = error.rawResponse(allocator: context.channel.allocator)
            let answered = self.answered
            context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in answered.fail(TooManyConnections()) }
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let budget = connections, let address = channel.remoteAddress?.ipAddress {
            guard budget.admit(address) else {
                // Answered once the channel is active; `handle` then sees the failed upgrade and closes it.
                let answered = channel.eventLoop.makePromise(of: Upgrade.self)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectionRefusal(limit: budget.limitPerAddress, answered: answered))
                    return Value(upgrade: answered.futureResult, channel: channel)
                }
            }
            channel.closeFuture.whenComplete { _ in budget.release(address) }
        }
        return channel.eventLoop.makeCompletedFuture {
            if let slowClients { try channel.pipeline.syncOperations.addHandler(SlowClientGuard(settings: slowClients)) }
            let refusal = NIOLoopBoundBox<APIError?>(nil, eventLoop: channel.eventLoop)
            let sockets = self.sockets
            let notify = self.notify
            let upgrader = CheckedWebSocketUpgrader(
                refusal: refusal,
                inner: NIOTypedWebSocketServerUpgrader<Upgrade>(
                    maxFrameSize: sockets.settings.maxFrameBytes,
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            HTTPParseErrorAnswerer.remove(from: channel)
                            SlowClientGuard.remove(from: channel)
                            try sockets.attach(to: channel)
                            return Upgrade.websocket
                        }
                    }
                )
            )
            let upgradeConfiguration = NIOTypedHTTPServerUpgradeConfiguration<Upgrade>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                        if let notify { try channel.pipeline.syncOperations.addHandler(HomeAssistantFastPath(endpoint: notify)) }
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(isOutboundHalfClosureEnabled: true)
                        )
                        return refusal.value.map { Upgrade.refused(http, $0) } ?? Upgrade.notUpgraded(http)
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Upgrade>(upgradeConfiguration: upgradeConfiguration)
            configuration.enablePipelining = false  // NIOAsyncChannel serialises requests
            configuration.enableErrorHandling = false  // Hummingbird answers errors
            configuration.enableResponseHeaderValidation = false  // swift-http-types validates already
            let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            // Right after the decoder: parse errors are answered in JSON, the first request's included.
            let upgradeHandler = try channel.pipeline.syncOperations.handler(type: NIOTypedHTTPServerUpgradeHandler<Upgrade>.self)
            try channel.pipeline.syncOperations.addHandler(HTTPParseErrorAnswerer(), position: .before(upgradeHandler))
            return Value(upgrade: upgrade, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgrade.get() {
            case .websocket:
                // The NIO handlers own the connection from here on; this task ends.
                return
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let error):
                await refuse(http, error)
            }
        } catch let error as ChannelError where error == .inputClosed {
            // The client closed its side before a request: nothing more can come, so the server's side closes too
            // (a half-open connection would hold its descriptor and its address's connection budget).
            logger.trace("connection closed before a request")
            value.channel.close(promise: nil)
        } catch {
            // A request that could not be parsed (answered by HTTPParseErrorAnswerer) or a failed upgrade: nothing
            // more will be read from this connection, so it must not stay open.
            logger.debug("connection setup failed", metadata: ["error": .string("\(error)")])
            value.channel.close(promise: nil)
        }
    }

    /// Why a websocket upgrade request is refused, if it is: another path (404), or an incomplete handshake (400).
    static func refusal(_ head: HTTPRequestHead) -> APIError? {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        guard path == Self.path else { return .notFound("Websocket connections are served at \(Self.path) only.") }
        // Without it, NIO's HTTP decoder does not see an upgrade and goes on parsing what follows as more requests,
        // which the upgrade handler would replay into the websocket pipeline (a crash).
        guard head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) else {
            return .badRequest("A websocket upgrade needs the Connection: Upgrade header.")
        }
        guard head.headers.first(name: "Sec-WebSocket-Key")?.isEmpty == false,
            head.headers.first(name: "Sec-WebSocket-Version") == "13"
        else {
            return .badRequest("A websocket upgrade needs the Sec-WebSocket-Key header and Sec-WebSocket-Version: 13.")
        }
        return nil
    }

    /// Answers a refused upgrade with its JSON error; then the connection closes.
    private func refuse(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, _ error: APIError) async {
        let body = ByteBuffer(bytes: JSONWriter.bytes(error.body))
        let head = HTTPResponse(
            status: error.status,
            headerFields: [
                .connection: "close", .contentType: "application/json", .contentLength: "\(body.readableBytes)",
            ]
        )
        try? await http.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [.head(head), .body(body), .end(nil)])
        }
    }

    /// NIO negotiates an upgrade only on a connection's first request. A websocket upgrade arriving later on a
    /// keep-alive connection gets a redirect to the same path and a closed connection, so the client retries fresh.
    private static func redirectingLateUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct LateUpgrade: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            var location = request.uri.path
            if let query = request.uri.query { location += "?\(query)" }
            try await writer.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw LateUpgrade()
        }
    }
}

/// NIO's websocket upgrader behind PushRelay's own check of the request. A refused upgrade is remembered, so that
/// it gets a JSON answer: NIO has consumed the request head by then, and plain HTTP handling would only see its end.
struct CheckedWebSocketUpgrader: NIOTypedHTTPServerProtocolUpgrader {
    let refusal: NIOLoopBoundBox<APIError?>
    let inner: NIOTypedWebSocketServerUpgrader<PushRelayHTTPChannel.Upgrade>

    var supportedProtocol: String { inner.supportedProtocol }
    var requiredUpgradeHeaders: [String] { inner.requiredUpgradeHeaders }

    func buildUpgradeResponse(
        channel: any Channel,
        upgradeRequest: HTTPRequestHead,
        initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        if let error = PushRelayHTTPChannel.refusal(upgradeRequest) {
            refusal.value = error
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<PushRelayHTTPChannel.Upgrade> {
        inner.upgrade(channel: channel, upgradeRequest: upgradeRequest)
    }
}

/// The live websocket connections: attaches the handlers after an upgrade, and closes every connection on shutdown.
final class LocalPushSockets: Sendable {
    let endpoint: LocalPushEndpoint
    var settings: LocalPushSettings { endpoint.settings }
    private let live = Locked<[Int: LocalPushConnection]>([:])

    init(endpoint: LocalPushEndpoint) {
        self.endpoint = endpoint
    }

    var count: Int { live.withLock { $0.count } }

    /// Runs on the channel's event loop, right after the upgrade response.
    func attach(to channel: any Channel) throws {
        let shared = SocketClosing()
        let connection = LocalPushConnection(
            peer: channel.remoteAddress?.ipAddress ?? "unknown",
            bufferLimit: settings.outboundBuffer,
            sink: .init(channel: channel, closing: shared),
            logger: endpoint.logger
        )
        let session = LocalPushSessionRunner(
            endpoint: endpoint,
            connection: connection,
            setReading: { on in
                channel.setOption(ChannelOptions.autoRead, value: on).whenComplete { _ in
                    if on { channel.read() }
                }
            }
        ) { [self] in
            live.withLock { $0[connection.id] = nil }
            channel.close(promise: nil)
        }
        try channel.pipeline.syncOperations.addHandler(LocalPushInboundFrame.frameAggregator(maxFrameBytes: settings.maxFrameBytes))
        try channel.pipeline.syncOperations.addHandler(
            LocalPushSocketHandler(
                session: session,
                closing: shared,
                pingInterval: .milliseconds(Int64(settings.pingIntervalMs))
            )
        )
        live.withLock { $0[connection.id] = connection }
        endpoint.opened(connection)
    }

    /// Says goodbye to every connection (server shutdown): each gets a close frame after what is queued for it.
    func closeAll() {
        for connection in live.withLock({ Array($0.values) }) {
            connection.markClosed(.serverShutdown)
        }
    }
}

/// Whether this side already sent its close frame; shared by the socket handler and the connection's sink.
final class SocketClosing: Sendable {
    private let sent = Atomic<Bool>(false)
    /// True for the first caller only.
    func claim() -> Bool { !sent.exchange(true, ordering: .relaxed) }
    /// How long to wait for the peer's close frame before closing the socket anyway.
    static let timeout = TimeAmount.seconds(2)
}

extension WebSocketFrame {
    /// A close frame: the status code, then the reason (may be empty).
    static func close(_ code: WebSocketErrorCode, reason: String) -> WebSocketFrame {
        var data = ByteBuffer()
        data.reserveCapacity(2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }
}

extension LocalPushConnection.Sink {
    /// Frames go to the NIO channel (from any thread); a close sends a close frame, then the socket closes when the
    /// peer answers with its own, or after `SocketClosing.timeout`.
    init(channel: any Channel, closing: SocketClosing) {
        self.init(
            write: { text in
                try await channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text))).get()
            },
            close: { code, reason in
                guard closing.claim() else { return }
                // Scheduled first: a peer that stopped reading never lets the close frame out, and must not keep the
                // socket (and what is queued for it) open for that.
                channel.eventLoop.scheduleTask(in: SocketClosing.timeout) { channel.close(promise: nil) }
                try? await channel.writeAndFlush(WebSocketFrame.close(code, reason: reason)).get()
            },
            closeSoon: {
                channel.eventLoop.scheduleTask(in: SocketClosing.timeout) { channel.close(promise: nil) }
            }
        )
    }
}

/// Handles one connection's messages in order, in a task that exists only while messages wait; then, once the socket
/// is gone, the disconnect (its unconfirmed messages fall back).
///
/// Backpressure: past `pauseAt` waiting messages the socket stops being read (NIO `autoRead` off), and reading resumes
/// once the backlog is down to `resumeAt`, so a client that sends faster than its messages are handled costs bounded
/// memory.
final class LocalPushSessionRunner: Sendable {
    static let pauseAt = 32
    static let resumeAt = 8

    enum Input: Sendable {
        case text(String)
        case binary
    }

    private enum Step {
        case message(Input, LocalPushEndpoint.Session)
        case disconnect
        case idle
    }

    private struct State {
        var inbox: [Input] = []
        var session: LocalPushEndpoint.Session
        var running = false
        var socketGone = false
        var disconnected = false
        var readingPaused = false
    }

    let endpoint: LocalPushEndpoint
    let connection: LocalPushConnection
    private let onDisconnected: @Sendable () -> Void
    /// Turns reading from the socket off (false) or on (true).
    private let setReading: @Sendable (Bool) -> Void
    private let state: Locked<State>

    init(
        endpoint: LocalPushEndpoint,
        connection: LocalPushConnection,
        setReading: @escaping @Sendable (Bool) -> Void,
        onDisconnected: @escaping @Sendable () -> Void
    ) {
        self.endpoint = endpoint
        self.connection = connection
        self.setReading = setReading
        self.onDisconnected = onDisconnected
        state = Locked(State(session: .init(connection: connection)))
    }

    func received(_ input: Input) {
        let (start, pause) = state.withLock { s -> (Bool, Bool) in
            guard !s.socketGone else { return (false, false) }
            s.inbox.append(input)
            let pause = !s.readingPaused && s.inbox.count >= Self.pauseAt
            if pause { s.readingPaused = true }
            return (claim(&s), pause)
        }
        if pause { setReading(false) }
        if start { Task { await run() } }
    }

    func socketClosed() {
        let start = state.withLock { s -> Bool in
            s.socketGone = true
            return claim(&s)
        }
        if start { Task { await run() } }
    }

    private func claim(_ s: inout State) -> Bool {
        if s.running { return false }
        s.running = true
        return true
    }

    private func run() async {
        while true {
            let (step, resume) = state.withLock { s -> (Step, Bool) in
                var resume = false
                if s.readingPaused && (s.inbox.count <= Self.resumeAt || connection.isClosed) {
                    s.readingPaused = false
                    resume = true
                }
                if !s.inbox.isEmpty && !connection.isClosed { return (.message(s.inbox.removeFirst(), s.session), resume) }
                s.inbox.removeAll()
                if s.socketGone && !s.disconnected {
                    s.disconnected = true
                    return (.disconnect, resume)
                }
                s.running = false
                return (.idle, resume)
            }
            if resume { setReading(true) }
            switch step {
            case .message(let input, var session):
                await connection.waitForRoom()
                switch input {
                case .text(let text): await endpoint.handle(text, session: &session)
                case .binary: connection.send(LocalPushWire.error(id: nil, .invalidFormat, "Only JSON text messages are accepted."))
                }
                state.withLock { $0.session = session }
            case .disconnect:
                await endpoint.closed(connection)
                onDisconnected()
            case .idle:
                return
            }
        }
    }
}

/// The websocket frames of one connection, on its event loop: text to the session, ping/pong/close handled here, and
/// a keepalive ping every `pingInterval` that closes a peer which did not answer the previous one.
final class LocalPushSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let session: LocalPushSessionRunner
    private let closing: SocketClosing
    private let pingInterval: TimeAmount
    private var keepalive: RepeatedTask?
    private var awaitingPong = false
    private var gone = false

    init(session: LocalPushSessionRunner, closing: SocketClosing, pingInterval: TimeAmount) {
        self.session = session
        self.closing = closing
        self.pingInterval = pingInterval
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        keepalive = loop.scheduleRepeatedTask(initialDelay: pingInterval, delay: pingInterval) { _ in
            let (handler, context) = bound.value
            handler.ping(context: context)
        }
    }

    private func ping(context: ChannelHandlerContext) {
        guard !gone else { return }
        if awaitingPong {
            session.endpoint.logger.debug("websocket peer did not answer a ping; closing", metadata: ["peer": .string(session.connection.peer)])
            context.close(promise: nil)
            return
        }
        awaitingPong = true
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "pushrelay"))), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        awaitingPong = false
        switch LocalPushInboundFrame(unwrapInboundIn(data)) {
        case .text(let text):
            session.received(.text(text))
        case .invalidText:
            close(context: context, code: .dataInconsistentWithMessage, reason: "text frame is not valid UTF-8")
        case .binary:
            session.received(.binary)
        case .ping(let data):
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: data)), promise: nil)
        case .fragmentedControl:
            context.close(promise: nil)
        case .close(let code):
            // The peer says goodbye first (answered with its code, then the socket closes), or this answers our own
            // close frame (the socket just closes).
            close(context: context, code: code, reason: "")
        case .ignored:
            break
        }
    }

    /// A protocol error after the frame decoder (a fragmented message over `channel.max_frame_bytes`, too many
    /// fragments): a close frame that says why, then the socket closes. (A single oversized frame is refused by NIO's
    /// decoder, which closes with 1009 itself.)
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session.endpoint.logger.debug("websocket error: \(error)", metadata: ["peer": .string(session.connection.peer)])
        switch error as? NIOWebSocketFrameAggregator.Error {
        case .accumulatedFrameSizeIsTooLarge?, .tooManyFragments?: close(context: context, code: .messageTooLarge, reason: "message too big")
        default: close(context: context, code: .protocolError, reason: "websocket protocol error")
        }
    }

    /// Closes from this side: a close frame with the code and reason, then the socket. If a close frame was sent
    /// already, only the socket.
    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        guard closing.claim() else {
            context.close(promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.close(code, reason: reason))).whenComplete { _ in context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
    }

    private func end() {
        guard !gone else { return }
        gone = true
        keepalive?.cancel()
        keepalive = nil
        session.socketClosed()
    }
}
