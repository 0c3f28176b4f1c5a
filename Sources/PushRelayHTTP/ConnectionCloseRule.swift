import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayEventLoopClock

/// Which requests end their connection once answered: as HTTP/1.x says, an HTTP/1.0 request without
/// `Connection: keep-alive`, any request with `Connection: close`, and CONNECT (what would follow it on the connection
/// is a tunnel, which PushRelay does not offer); and, once the server is stopping (`ServerLifecycle`), every request,
/// so that clients open their next connection anew (to another instance, behind a load balancer).
///
/// The HTTP types the rest of the server reads carry no protocol version, so this handler sits right after NIO's
/// HTTP/1 decoder, from the connection's first request (a websocket upgrade removes it). It writes the decision into
/// the request as `Connection: close`; whoever answers it (the fast path, the router) completes the answer's head with
/// `ResponseHead`, which then says `Connection: close`, and closes the connection after it. `ResponseHead` also closes
/// the answer to a request read before the stop began, once the stop has begun; this handler writes no answer's head.
///
/// When the listener stops (`ChannelShouldQuiesceEvent`), a connection answering a request closes after its answer
/// (a stop has begun by then, so the answer says `Connection: close`); an idle one waits `linger` for a request the
/// client may have sent before it could know (answered, then closed), and closes.
///
/// From a websocket upgrade request on, everything passes through untouched (as in `HTTPParseErrorAnswerer`): once
/// the upgrade takes the HTTP decoder out, the bytes behind the upgrade request come through as raw bytes, not HTTP
/// parts. The upgrade then removes the handler; a refused upgrade closes its connection.
package final class ConnectionCloseRule: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// How long an idle connection stays open after the listener stopped, for a request already on its way.
    package static let linger = Duration.milliseconds(500)

    /// How many requests were read and not yet answered; what a stop does.
    package struct State {
        private var pending = 0
        /// The listener stopped: an idle connection closes.
        package private(set) var quiesced = false

        package init() {}

        package enum AfterAnswer: Equatable {
            /// Nothing to do: the connection stays open, or whoever answered closes it.
            case nothing
            /// The connection is idle after a stop: close it after the linger, unless a request comes.
            case linger
        }

        /// A request arrived: `head` as the rest of the server should see it. `stopping`: a stop has begun.
        package mutating func received(_ head: HTTPRequestHead, stopping: Bool) -> HTTPRequestHead {
            pending += 1
            guard ConnectionCloseRule.closesAfterAnswer(head) || stopping || quiesced else { return head }
            var head = head
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return head
        }

        /// An answer is complete.
        package mutating func answered() -> AfterAnswer {
            pending = max(pending - 1, 0)
            return quiesced && pending == 0 ? .linger : .nothing
        }

        /// The listener stopped: an idle connection lingers, then closes; a busy one is closed by whoever answers
        /// (`ResponseHead`).
        package mutating func quiesce() -> AfterAnswer {
            quiesced = true
            return pending == 0 ? .linger : .nothing
        }

        /// The linger is over: whether to close (no request came meanwhile).
        package var closesAfterLinger: Bool { pending == 0 }
    }

    /// Whether the connection must close once `head` is answered, whatever the server is doing.
    package static func closesAfterAnswer(_ head: HTTPRequestHead) -> Bool {
        !head.isKeepAlive || head.method == .CONNECT
    }

    private var state = State()
    private let isStopping: @Sendable () -> Bool
    private let isClosing: @Sendable () -> Bool
    private let clock: any TimePort
    private var lingering: ScheduledTimer?
    /// A websocket upgrade is under way.
    private var passthrough = false

    /// - Parameters:
    ///   - clock: Where the linger runs.
    ///   - isStopping: Whether a stop has begun (read at each request).
    ///   - isClosing: Whether the listener has stopped (read when the handler is added: a connection accepted as the
    ///     listener closed may be set up after the request to finish reached it).
    package init(
        clock: any TimePort,
        isStopping: @escaping @Sendable () -> Bool = { false },
        isClosing: @escaping @Sendable () -> Bool = { false }
    ) {
        self.clock = clock
        self.isStopping = isStopping
        self.isClosing = isClosing
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if isClosing(), state.quiesce() == .linger { linger(context: context) }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        guard !passthrough, case .end = unwrapOutboundIn(data) else { return }
        if state.answered() == .linger { linger(context: context) }
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent, !passthrough else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if state.quiesce() == .linger { linger(context: context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        lingering?.cancel()
        lingering = nil
    }

    private func linger(context: ChannelHandlerContext) {
        guard lingering == nil else { return }
        lingering = clock.schedule(after: Self.linger, on: context.eventLoop.assumeIsolated()) {
            self.lingering = nil
            if self.state.closesAfterLinger { context.close(promise: nil) }
        }
    }

    /// Takes the rule out of an upgraded (websocket) connection's pipeline.
    package static func remove(from channel: any Channel) {
        if let handler = try? channel.pipeline.syncOperations.handler(type: ConnectionCloseRule.self) {
            channel.pipeline.syncOperations.removeHandler(handler, promise: nil)
        }
    }
}
