import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PushRelayCore
import Synchronization

/// The notify POSTs (Home Assistant's three routes and the Matrix push gateway's), answered from the connection's NIO
/// pipeline instead of Hummingbird's router.
///
/// These routes are the product's hot paths. The router's request and body async sequences, response writer and
/// their task hops cost more CPU than the rest of a notification's handling (`Benchmarks/README.md`); here the body
/// is collected by this handler and the request runs as one short task that writes its answer back on the loop. The
/// decisions are `StateMachine`'s; this handler only performs them. The rules are the router's own components:
/// `HomeAssistantRequest` and `MatrixRoutes.notification` read the body, the services decide, `HomeAssistantAnswer`
/// and `MatrixRoutes.answer` render the outcome, `RequestID.accept` names the request, `TrustedProxies.client` finds
/// its client, `APIError.bodyTooLarge` and `MatrixRoutes.bodyTooLarge` are the 413s, `JSONResponse.headers` and
/// `PushRelayMetrics.record` are the answer's headers and its metrics. `NotifyPathsDifferentialTests` holds both paths
/// to the same bytes for every notify route.
///
/// Everything else passes through untouched to Hummingbird, which still serves these paths for other methods (the
/// JSON 405). The handler sits after Hummingbird's `HTTPConnectionStateHandler`, which therefore still sees every
/// request and response: graceful shutdown waits for an answer in flight here as for any other, and idle timeouts are
/// unchanged. Responses stay in request order: a request is only taken here when nothing forwarded to Hummingbird is
/// still unanswered, and parts that arrive while an answer is being prepared wait (and stop further reads) until it
/// is written.
final class NotifyFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the handler needs from the application (one per server, shared by every connection).
    struct Endpoint: Sendable {
        /// The answer to a notify POST: status, extra headers and the JSON body.
        typealias Answer = (status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8])

        /// How one complete request is answered: at once, on the event loop (bad input), or by a task.
        enum Handling: Sendable {
            case now(Answer)
            case later(@Sendable () async -> Answer)
        }

        let maxBodyBytes: Int
        /// The 413 of a body past `maxBodyBytes` on `route`.
        let tooLarge: @Sendable (NotifyRoute) -> Answer
        let metrics: PushRelayMetrics?
        let serverName: String?
        let dates = HTTPDateCache()
        /// Reverse proxies whose forwarding headers name the client (`http.trusted_proxies`), for `ClientAddress`.
        let trustedProxies: TrustedProxies
        /// Decides how one complete request's body is answered. Runs on the event loop, so it must not block.
        let handle: @Sendable (ByteBuffer, NotifyRoute) -> Handling

        init(
            maxBodyBytes: Int,
            metrics: PushRelayMetrics?,
            serverName: String?,
            trustedProxies: TrustedProxies = TrustedProxies(),
            tooLarge: (@Sendable (NotifyRoute) -> Answer)? = nil,
            handle: @escaping @Sendable (ByteBuffer, NotifyRoute) -> Handling
        ) {
            self.maxBodyBytes = maxBodyBytes
            self.tooLarge = tooLarge ?? { _ in Endpoint.render(APIError.bodyTooLarge(limit: maxBodyBytes)) }
            self.metrics = metrics
            self.serverName = serverName
            self.trustedProxies = trustedProxies
            self.handle = handle
        }

        /// An endpoint that answers every request by a task.
        init(
            maxBodyBytes: Int,
            metrics: PushRelayMetrics?,
            serverName: String?,
            answer: @escaping @Sendable (ByteBuffer, NotifyRoute) async -> Answer
        ) {
            self.init(maxBodyBytes: maxBodyBytes, metrics: metrics, serverName: serverName) { body, route in
                .later { await answer(body, route) }
            }
        }

        /// An error as an answer.
        static func render(_ error: APIError) -> Answer { (error.status, error.headers, JSONWriter.bytes(error.body)) }

        /// The notify endpoints: Home Assistant's (`HomeAssistantRequest` reads the body, `HomeAssistantService`
        /// decides, `HomeAssistantAnswer` renders the outcome) and the Matrix gateway's (`MatrixRoutes.notification`,
        /// `MatrixGateway`, `MatrixRoutes.answer`), as on the router. Bad input is answered on the event loop.
        static func notify(
            homeAssistant service: HomeAssistantService,
            matrix gateway: MatrixGateway,
            maxBodyBytes: Int,
            metrics: PushRelayMetrics?,
            serverName: String?,
            trustedProxies: TrustedProxies
        ) -> Endpoint {
            typealias Matrix = MatrixRoutes<PushRelayRequestContext>
            let tooLarge: @Sendable (NotifyRoute) -> Answer = { route in
                switch route {
                case .homeAssistant: render(APIError.bodyTooLarge(limit: maxBodyBytes))
                case .matrix: render(Matrix.bodyTooLarge(limit: maxBodyBytes))
                }
            }
            return Endpoint(maxBodyBytes: maxBodyBytes, metrics: metrics, serverName: serverName, trustedProxies: trustedProxies, tooLarge: tooLarge)
            {
                body,
                route -> Handling in
                switch route {
                case .homeAssistant(let platform):
                    let n: HANotification
                    do throws(APIError) {
                        n = try HomeAssistantRequest.notification(try HomeAssistantRequest.parse(body.readableBytesView))
                    } catch {
                        return .now(render(error))
                    }
                    return .later {
                        let answer = HomeAssistantAnswer(await service.send(n, platform: platform), token: n.pushToken)
                        return (answer.status, answer.headers, answer.body)
                    }
                case .matrix:
                    let n: MatrixNotification
                    do throws(APIError) {
                        n = try Matrix.notification(body)
                    } catch {
                        return .now(render(error))
                    }
                    return .later { await Matrix.answer(to: n, gateway: gateway) }
                }
            }
        }

        /// The route of a request this handler answers, if it is one: a POST to one of the notify routes (the
        /// router's tables for the same paths), query cut.
        func route(_ head: HTTPRequest) -> StateMachine.Route? {
            guard head.method == .post, var path = head.path else { return nil }
            if let q = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = String(path[..<q]) }
            guard let target = NotifyRoute.route(path: path), head.headerFields[.upgrade] == nil else { return nil }
            return (path, target)
        }
    }

    private let endpoint: Endpoint
    private var machine: StateMachine
    /// The connection's peer address, read once.
    private var peer: String?

    init(endpoint: Endpoint) {
        self.endpoint = endpoint
        self.machine = StateMachine(maxBodyBytes: endpoint.maxBodyBytes)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        receive(unwrapInboundIn(data), context: context)
    }

    /// Feeds one part to the state machine and performs its action; returns whether the part was passed on.
    @discardableResult
    private func receive(_ part: HTTPRequestPart, context: ChannelHandlerContext) -> Bool {
        let endpoint = self.endpoint
        switch machine.read(part, route: { endpoint.route($0) }) {
        case .none:
            return false
        case .forward(let part):
            context.fireChannelRead(wrapInboundOut(part))
            return true
        case .answer(let head, let route, let body):
            answer(head, route: route, body: body, context: context)
            return false
        case .rejectTooLarge(let head, let route):
            let id = RequestID.accept(head.headerFields[.requestID])
            write(head, path: route.path, requestID: id, answer: endpoint.tooLarge(route.target), started: .now, context: context)
            return false
        case .protocolError:
            context.fireErrorCaught(HTTPChannelStateError.unexpectedPart)
            return false
        }
    }

    private func answer(_ head: HTTPRequest, route: StateMachine.Route, body: ByteBuffer, context: ChannelHandlerContext) {
        let path = route.path
        let started = ContinuousClock.now
        let endpoint = self.endpoint
        let id = RequestID.accept(head.headerFields[.requestID])
        let run: @Sendable () async -> Endpoint.Answer
        switch RequestID.$current.withValue(id, operation: { endpoint.handle(body, route.target) }) {
        case .now(let answer):
            write(head, path: path, requestID: id, answer: answer, started: started, context: context)
            return
        case .later(let later):
            run = later
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let client = clientAddress(head, context: context)
        // Started on the loop, with NIO as the concurrency executor: the task runs here, and the store resumes it here.
        Task {
            let answer = await RequestID.$current.withValue(id) { await ClientAddress.$current.withValue(client) { await run() } }
            let finish: @Sendable () -> Void = {
                bound.value.handler.write(head, path: path, requestID: id, answer: answer, started: started, context: bound.value.context)
            }
            if loop.inEventLoop { finish() } else { loop.execute(finish) }
        }
    }

    /// The request's client: the peer, or the client a trusted proxy's forwarding headers name.
    private func clientAddress(_ head: HTTPRequest, context: ChannelHandlerContext) -> String {
        let peer = self.peer ?? context.channel.remoteAddress?.ipAddress ?? "unknown"
        self.peer = peer
        return endpoint.trustedProxies.client(peer: peer, headers: head.headerFields)
    }

    private func write(
        _ head: HTTPRequest,
        path: String,
        requestID: String,
        answer: Endpoint.Answer,
        started: ContinuousClock.Instant,
        context: ChannelHandlerContext
    ) {
        let close = head.headerFields[.connection] == "close" || answer.status == .contentTooLarge
        var fields = JSONResponse.headers(answer.headers, contentLength: answer.body.count)
        fields[.requestID] = requestID
        fields[.date] = endpoint.dates.current()
        if let server = endpoint.serverName { fields[.server] = server }
        if close { fields[.connection] = "close" }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        endpoint.metrics?.record(route: path, method: head.method.rawValue, status: answer.status.code, duration: .now - started)
        switch machine.answered(close: close) {
        case .close:
            context.close(promise: nil)
        case .resume(let held):
            // Parts that arrived meanwhile (a pipelined request), then reading resumes. Hummingbird's side takes what
            // was passed on at the next read-complete, so one is sent for them.
            var passedOn = false
            for part in held { passedOn = receive(part, context: context) || passedOn }
            if passedOn { context.fireChannelReadComplete() }
            if machine.takePendingRead() { context.read() }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { machine.forwardedResponseEnded() }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if machine.readRequested() { context.read() }
    }
}

/// A request part NIO's HTTP decoder cannot produce where it came.
enum HTTPChannelStateError: Error {
    case unexpectedPart
}
