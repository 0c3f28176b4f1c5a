import NIOCore
import NIOHTTP1

/// Which requests end their connection once answered: as HTTP/1.x says, an HTTP/1.0 request without
/// `Connection: keep-alive`, any request with `Connection: close`, and CONNECT (what would follow it on the connection
/// is a tunnel, which PushRelay does not offer); and, once the server is stopping (`ServerLifecycle`), every request,
/// so that clients open their next connection anew (to another instance, behind a load balancer).
///
/// The HTTP types the rest of the server reads carry no protocol version, so this handler sits right after NIO's
/// HTTP/1 decoder, from the connection's first request (a websocket upgrade removes it). It writes the decision into
/// the request as `Connection: close`, which the Home Assistant fast path and Hummingbird's connection handler both
/// honour by closing the connection after the answer, and it makes sure that answer says `Connection: close` too,
/// whoever wrote it. An answer to a request read before the stop began says `Connection: close` too, and this handler
/// closes its connection once it is written.
///
/// When the listener stops (`ChannelShouldQuiesceEvent`), a connection answering a request closes after its answer;
/// an idle one waits `linger` for a request the client may have sent before it could know (answered, then closed),
/// and closes.
///
/// From a websocket upgrade request on, everything passes through untouched (as in `HTTPParseErrorAnswerer`): once
/// the upgrade takes the HTTP decoder out, the bytes behind the upgrade request come through as raw bytes, not HTTP
/// parts. The upgrade then removes the handler; a refused upgrade closes its connection.
final class ConnectionCloseRule: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long an idle connection stays open after the listener stopped, for a request already on its way.
    static let linger = TimeAmount.milliseconds(500)

    /// The requests read and not yet answered, in order, and whether each ends the connection; what a stop does.
    struct State {
        private var pending: [Bool] = []
        /// The answer being written says `Connection: close` though its request did not: nobody else closes.
        private var closingAnswer = false
        /// The listener stopped: an idle connection closes.
        private(set) var quiesced = false

        enum AfterAnswer: Equatable {
            /// Nothing to do: the connection stays open, or whoever answered closes it.
            case nothing
            /// Close the connection once the answer is written.
            case close
            /// The connection is idle after a stop: close it after the linger, unless a request comes.
            case linger
        }

        /// A request arrived: `head` as the rest of the server should see it. `stopping`: a stop has begun.
        mutating func received(_ head: HTTPRequestHead, stopping: Bool) -> HTTPRequestHead {
            let closes = ConnectionCloseRule.closesAfterAnswer(head) || stopping || quiesced
            pending.append(closes)
            guard closes else { return head }
            var head = head
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return head
        }

        /// An answer's head is written: the head to write (informational heads pass unchanged).
        mutating func answering(_ head: HTTPResponseHead, stopping: Bool) -> HTTPResponseHead {
            guard head.status.code >= 200, let closes = pending.first else { return head }
            if !closes {
                guard stopping || quiesced else { return head }
                closingAnswer = true
            }
            var head = head
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return head
        }

        /// An answer is complete.
        mutating func answered() -> AfterAnswer {
            if !pending.isEmpty { pending.removeFirst() }
            if closingAnswer {
                closingAnswer = false
                return .close
            }
            return quiesced && pending.isEmpty ? .linger : .nothing
        }

        /// The listener stopped: an idle connection lingers, then closes; a busy one closes after its answer.
        mutating func quiesce() -> AfterAnswer {
            quiesced = true
            return pending.isEmpty ? .linger : .nothing
        }

        /// The linger is over: whether to close (no request came meanwhile).
        var closesAfterLinger: Bool { pending.isEmpty }
    }

    /// Whether the connection must close once `head` is answered, whatever the server is doing.
    static func closesAfterAnswer(_ head: HTTPRequestHead) -> Bool {
        !head.isKeepAlive || head.method == .CONNECT
    }

    private var state = State()
    private let isStopping: @Sendable () -> Bool
    private var lingering: Scheduled<Void>?
    /// A websocket upgrade is under way.
    private var passthrough = false

    /// - Parameter isStopping: Whether a stop has begun (read at each request and answer).
    init(isStopping: @escaping @Sendable () -> Bool = { false }) {
        self.isStopping = isStopping
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !passthrough, case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if head.headers.contains(name: "upgrade") {
            passthrough = true
            context.fireChannelRead(data)
            return
        }
        context.fireChannelRead(wrapInboundOut(.head(state.received(head, stopping: isStopping()))))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !passthrough else {
            context.write(data, promise: promise)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let head):
            context.write(wrapOutboundOut(.head(state.answering(head, stopping: isStopping()))), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            let after = state.answered()
            switch after {
            case .nothing:
                context.write(data, promise: promise)
            case .close:
                let written = promise ?? context.eventLoop.makePromise()
                context.write(data, promise: written)
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            case .linger:
                context.write(data, promise: promise)
                linger(context: context)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent, !passthrough else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if state.quiesce() == .linger { linger(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        lingering?.cancel()
        lingering = nil
    }

    private func linger(context: ChannelHandlerContext) {
        guard lingering == nil else { return }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        lingering = context.eventLoop.scheduleTask(in: Self.linger) {
            let (handler, context) = bound.value
            handler.lingering = nil
            if handler.state.closesAfterLinger { context.close(promise: nil) }
        }
    }

    /// Takes the rule out of an upgraded (websocket) connection's pipeline.
    static func remove(from channel: any Channel) {
        if let handler = try? channel.pipeline.syncOperations.handler(type: ConnectionCloseRule.self) {
            channel.pipeline.syncOperations.removeHandler(handler, promise: nil)
        }
    }
}
