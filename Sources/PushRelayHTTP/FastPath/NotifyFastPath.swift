import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PushRelayCore
import PushRelayServerMetrics
import Synchronization

/// POST routes answered from the connection's NIO pipeline instead of Hummingbird's router: the notify POSTs (Home
/// Assistant's three routes and the Matrix push gateway's), which the application registers in `Endpoint.routes`.
///
/// These routes are the product's hot paths. The router's request and body async sequences, response writer and
/// their task hops cost more CPU than the rest of a notification's handling (`Benchmarks/README.md`); here the body
/// is collected by this handler and the request runs as one short task that writes its answer back on the loop. The
/// decisions are `StateMachine`'s; this handler only performs them. The rules are the router's own: each route's
/// handler reads the body, asks its service and renders the outcome with that route's own reader and renderer,
/// `BodyLimit` checks the body and gives the route's 413, `ResponseHead` completes every answer's head,
/// `RequestID.accept` names the request, `ClientAddress` finds its client, `JSONResponse.headers` and
/// `PushRelayMetrics.record` are the answer's headers and its metrics. `NotifyPathsDifferentialTests` holds both paths
/// to the same bytes for every notify route.
///
/// Everything else passes through untouched to Hummingbird, which still serves these paths for other methods (the
/// JSON 405). The handler sits after Hummingbird's `HTTPConnectionStateHandler`, which therefore still sees every
/// request and response: graceful shutdown waits for an answer in flight here as for any other, and idle timeouts are
/// unchanged. Responses stay in request order: a request is only taken here when nothing forwarded to Hummingbird is
/// still unanswered, and parts that arrive while an answer is being prepared wait (and stop further reads) until it
/// is written. An answer that ends the connection (`ResponseHead`) closes it, and what was held is dropped.
///
/// A client that does not read its answers stops being read: while the channel is not writable no request is started
/// and no read issued, and reading resumes when it is writable again (`StateMachine` has the rule and its bounds).
package final class NotifyFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    /// What the handler needs from the application (one per server, shared by every connection).
    package struct Endpoint: Sendable {
        /// The answer to a request: status, extra headers and the JSON body.
        package typealias Answer = (status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8])

        /// How one complete request is answered: at once, on the event loop (bad input), or by a task.
        package enum Handling: Sendable {
            case now(Answer)
            case later(@Sendable () async -> Answer)
        }

        /// Decides how one complete request's body is answered. Runs on the event loop, so it must not block.
        package typealias Handler = @Sendable (ByteBuffer) -> Handling

        /// Checks a complete request (its head, and its client as `ClientAddress` finds it) before its handler runs:
        /// nil lets it through, an answer refuses it. Runs on the event loop, so it must not block.
        package typealias Guard = @Sendable (_ head: HTTPRequest, _ client: String) -> Answer?

        /// The POST routes answered here, by path (without query).
        package let routes: [String: Handler]
        /// Checks that run before a path's handler (the route's own access rule), by path.
        package var guards: [String: Guard] = [:]
        /// The body limit, and each path's 413 (the router's own).
        package let bodyLimit: BodyLimit
        /// Every answer's `Date`, `Server` and `Connection` (the router's own).
        package let head: ResponseHead
        package let metrics: PushRelayMetrics?
        /// Reverse proxies whose forwarding headers name the client (`http.trusted_proxies`), for `ClientAddress`.
        package let trustedProxies: TrustedProxies

        package init(
            routes: [String: Handler],
            bodyLimit: BodyLimit,
            head: ResponseHead,
            metrics: PushRelayMetrics? = nil,
            trustedProxies: TrustedProxies = TrustedProxies()
        ) {
            self.routes = routes
            self.bodyLimit = bodyLimit
            self.head = head
            self.metrics = metrics
            self.trustedProxies = trustedProxies
        }

        /// An error as an answer.
        package static func render(_ error: APIError) -> Answer { (error.status, error.headers, JSONWriter.bytes(error.body)) }

        /// The path of a request this handler answers, if it is one: a POST to one of `routes` (query cut) that offers
        /// no upgrade.
        package func route(_ head: HTTPRequest) -> String? {
            guard head.method == .post, var path = head.path else { return nil }
            if let q = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = String(path[..<q]) }
            guard routes[path] != nil, head.headerFields[.upgrade] == nil else { return nil }
            return path
        }
    }

    private let endpoint: Endpoint
    private var machine: StateMachine
    /// The connection's peer address, read once.
    private var peer: String?

    package init(endpoint: Endpoint) {
        self.endpoint = endpoint
        self.machine = StateMachine(limit: endpoint.bodyLimit)
    }

    /// Taking the held parts (`resume`): an answer written meanwhile, or a writability change, must not start another.
    private var resuming = false

    package func handlerAdded(context: ChannelHandlerContext) {
        _ = machine.writabilityChanged(context.channel.isWritable)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let endpoint = self.endpoint
        perform(machine.read(unwrapInboundIn(data), route: { endpoint.route($0) }), context: context)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        let resume = machine.writabilityChanged(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
        if resume { self.resume(context: context) }
    }

    /// Takes the held parts that may be taken now, in order, then issues the read asked for meanwhile, if any.
    private func resume(context: ChannelHandlerContext) {
        guard !resuming else { return }
        resuming = true
        defer { resuming = false }
        let endpoint = self.endpoint
        // Hummingbird's side takes what was passed on at the next read-complete, so one is sent for them.
        var passedOn = false
        while let action = machine.nextHeld(route: { endpoint.route($0) }) {
            passedOn = perform(action, context: context) || passedOn
        }
        if passedOn { context.fireChannelReadComplete() }
        if machine.takePendingRead() { context.read() }
    }

    /// Performs one of the state machine's read actions; returns whether a part was passed on.
    @discardableResult
    private func perform(_ action: StateMachine.ReadAction, context: ChannelHandlerContext) -> Bool {
        let endpoint = self.endpoint
        switch action {
        case .none:
            return false
        case .close:
            context.close(promise: nil)
            return false
        case .forward(let part):
            context.fireChannelRead(wrapInboundOut(part))
            return true
        case .answer(let head, let path, let body):
            answer(head, path: path, body: body, context: context)
            return false
        case .rejectTooLarge(let head, let path):
            let id = RequestID.accept(head.headerFields[.requestID])
            let answer = Endpoint.render(endpoint.bodyLimit.tooLarge(path: path))
            write(head, path: path, requestID: id, answer: answer, started: endpoint.head.clock.instant, context: context)
            return false
        case .protocolError:
            context.fireErrorCaught(HTTPChannelStateError.unexpectedPart)
            return false
        }
    }

    private func answer(_ head: HTTPRequest, path: String, body: ByteBuffer, context: ChannelHandlerContext) {
        let started = endpoint.head.clock.instant
        guard let handle = endpoint.routes[path] else { preconditionFailure("the state machine takes only the routes' paths") }
        let id = RequestID.accept(head.headerFields[.requestID])
        if let check = endpoint.guards[path], let refusal = check(head, clientAddress(head, context: context)) {
            write(head, path: path, requestID: id, answer: refusal, started: started, context: context)
            return
        }
        let run: @Sendable () async -> Endpoint.Answer
        switch RequestID.$current.withValue(id, operation: { handle(body) }) {
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
        let peer = self.peer ?? ClientAddress.peer(of: context.channel)
        self.peer = peer
        return ClientAddress.client(peer: peer, headers: head.headerFields, proxies: endpoint.trustedProxies)
    }

    private func write(
        _ head: HTTPRequest,
        path: String,
        requestID: String,
        answer: Endpoint.Answer,
        started: ContinuousClock.Instant,
        context: ChannelHandlerContext
    ) {
        var fields = JSONResponse.headers(answer.headers, contentLength: answer.body.count)
        fields[.requestID] = requestID
        let close = endpoint.head.complete(&fields, request: head.headerFields)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        endpoint.metrics?.record(
            route: path,
            method: head.method.rawValue,
            status: answer.status.code,
            duration: started.duration(to: endpoint.head.clock.instant)
        )
        switch machine.answered(close: close) {
        case .close:
            context.close(promise: nil)
        case .resume:
            // Parts that arrived meanwhile (a pipelined request), then reading resumes.
            resume(context: context)
        }
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { machine.forwardedResponseEnded() }
        context.write(data, promise: promise)
    }

    package func read(context: ChannelHandlerContext) {
        if machine.readRequested() { context.read() }
    }
}

/// A request part NIO's HTTP decoder cannot produce where it came.
enum HTTPChannelStateError: Error {
    case unexpectedPart
}
