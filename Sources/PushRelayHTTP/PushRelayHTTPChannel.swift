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

/// The server's connections: HTTP/1.1 for every route, and one websocket path (`WebSocketEndpoint`: the push
/// channel's, which the application wires) served by event-driven NIO handlers.
///
/// Why not HummingbirdWebSocket's handler: it keeps one Swift task (and child tasks) alive per websocket for the
/// connection's whole life, and their task-allocator slabs stay held while the connection idles (the memory figures
/// are in `Benchmarks/README.md`). Here the connection task ends once
/// the upgrade is done; an idle websocket is a NIO channel and the handlers its endpoint attached, and a message
/// starts a short task only while it is being handled.
package struct PushRelayHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    package enum Upgrade: Sendable {
        case websocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// A websocket upgrade that is refused: answered with this error, then the connection closes.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, APIError)
    }

    package struct Value: ServerChildChannelValue {
        package let upgrade: EventLoopFuture<Upgrade>
        package let channel: any Channel
    }

    package let responder: HTTPChannelHandler.Responder
    /// Where a websocket upgrade is accepted, and what takes the connection then.
    package let websocket: WebSocketEndpoint
    /// Home Assistant's notify POSTs, answered in the pipeline (`NotifyFastPath`).
    package let notify: NotifyFastPath.Endpoint?
    /// Time limits for slow clients (`SlowClientGuard`); nil: none.
    package let slowClients: SlowClientGuard.Settings?
    /// Connections per client address (`http.max_connections_per_address`); nil: no limit. A connection beyond it is
    /// refused at accept, unread and unanswered (`ConnectionBudget.accept`). A trusted proxy's connections carry many
    /// clients, so they are not counted.
    package let connections: ConnectionBudget?
    /// Reverse proxies whose forwarding headers name the client (`http.trusted_proxies`).
    package let trustedProxies: TrustedProxies
    /// Once a stop has begun, every answer closes its connection (`ConnectionCloseRule`).
    package let lifecycle: ServerLifecycle
    /// Completes the heads of the answers written below the router (a slow client's 408, a parse error's, a refused
    /// or late websocket upgrade's) as the router's are.
    package let head: ResponseHead
    /// Where an idle connection's linger at a stop runs.
    package let clock: any TimePort

    package init(
        responder: @escaping HTTPChannelHandler.Responder,
        websocket: WebSocketEndpoint,
        notify: NotifyFastPath.Endpoint? = nil,
        slowClients: SlowClientGuard.Settings? = nil,
        connections: ConnectionBudget? = nil,
        trustedProxies: TrustedProxies = TrustedProxies(),
        lifecycle: ServerLifecycle = ServerLifecycle(),
        head: ResponseHead,
        clock: any TimePort
    ) {
        self.responder = Self.redirectingLateUpgrades(responder, head: head)
        self.websocket = websocket
        self.notify = notify
        self.slowClients = slowClients
        self.connections = connections
        self.trustedProxies = trustedProxies
        self.lifecycle = lifecycle
        self.head = head
        self.clock = clock
    }

    /// A connection refused at accept for its address's budget: the budget resets it, and no `Value` is made for it.
    struct TooManyConnections: Error {}

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let connections, !connections.accept(channel, trustedProxies: trustedProxies) {
            return channel.eventLoop.makeFailedFuture(TooManyConnections())
        }
        return channel.eventLoop.makeCompletedFuture {
            let head = self.head
            if let slowClients { try channel.pipeline.syncOperations.addHandler(SlowClientGuard(settings: slowClients, head: head)) }
            let refusal = NIOLoopBoundBox<APIError?>(nil, eventLoop: channel.eventLoop)
            let websocket = self.websocket
            let notify = self.notify
            let proxies = self.trustedProxies
            let upgrader = CheckedWebSocketUpgrader(
                path: websocket.path,
                refusal: refusal,
                inner: NIOTypedWebSocketServerUpgrader<Upgrade>(
                    maxFrameSize: websocket.maxFrameBytes,
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, head in
                        channel.eventLoop.makeCompletedFuture {
                            HTTPParseErrorAnswerer.remove(from: channel)
                            ConnectionCloseRule.remove(from: channel)
                            SlowClientGuard.remove(from: channel)
                            let peer = ClientAddress.client(
                                peer: ClientAddress.peer(of: channel),
                                forwardedFor: head.headers[TrustedProxies.forwardedForHeader],
                                forwarded: head.headers[TrustedProxies.forwardedHeader],
                                proxies: proxies
                            )
                            try websocket.attach(channel, peer)
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
                        if let notify { try channel.pipeline.syncOperations.addHandler(NotifyFastPath(endpoint: notify)) }
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
            // Right after the decoder: parse errors are answered in JSON, the first request's included; then which
            // requests close their connection, from the first one on (a stop closes even a connection that has sent
            // nothing yet).
            let upgradeHandler = try channel.pipeline.syncOperations.handler(type: NIOTypedHTTPServerUpgradeHandler<Upgrade>.self)
            try channel.pipeline.syncOperations.addHandler(HTTPParseErrorAnswerer(head: head), position: .before(upgradeHandler))
            let lifecycle = self.lifecycle
            let clock = self.clock
            try channel.pipeline.syncOperations.addHandler(
                ConnectionCloseRule(clock: clock, isStopping: { lifecycle.isStopping }, isClosing: { lifecycle.isClosing }),
                position: .before(upgradeHandler)
            )
            return Value(upgrade: upgrade, channel: channel)
        }
    }

    package func handle(value: Value, logger: Logger) async {
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

    /// Why a websocket upgrade request is refused, if it is: another path than `path` (404), or an incomplete
    /// handshake (400).
    package static func refusal(_ head: HTTPRequestHead, path: String) -> APIError? {
        let requested = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        guard requested == path else { return .notFound("Websocket connections are served at \(path) only.") }
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
        let answer = head.closing(error)
        try? await http.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [.head(answer.head), .body(ByteBuffer(bytes: answer.body)), .end(nil)])
        }
    }

    /// NIO negotiates an upgrade only on a connection's first request. A websocket upgrade arriving later on a
    /// keep-alive connection gets a redirect to the same path and a closed connection, so the client retries fresh.
    private static func redirectingLateUpgrades(
        _ responder: @escaping HTTPChannelHandler.Responder,
        head: ResponseHead
    ) -> HTTPChannelHandler.Responder {
        struct LateUpgrade: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            var location = request.uri.path
            if let query = request.uri.query { location += "?\(query)" }
            try await writer.writeResponse(head.closing(.temporaryRedirect, [.location: location], bodyLength: 0))
            throw LateUpgrade()
        }
    }
}
