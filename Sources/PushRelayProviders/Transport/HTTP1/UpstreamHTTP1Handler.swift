import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayEventLoopClock

/// Sends one request at a time to a provider over HTTP/1.1 and completes it with its answer.
///
/// It sits after NIO's HTTP/1.1 client codec: a request is written as head, body and end and flushed once. The
/// request's deadline is one timer; past it the request fails and the connection closes, as HTTP/1.1 has no way to
/// cancel an exchange and keep the connection. A connection with no request for `idleTimeout` closes.
/// `UpstreamHTTP1StateMachine` keeps the books; this handler only does what it says. All its methods run on the
/// channel's event loop; its timers run on `clock`, which also tells it the time.
final class UpstreamHTTP1Handler: ChannelInboundHandler, UpstreamExchangeHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    typealias Machine = UpstreamHTTP1StateMachine<EventLoopPromise<UpstreamResponse>>

    private var machine = Machine()
    private var context: ChannelHandlerContext?
    private let clock: any TimePort
    private var deadlineTimer: ScheduledTimer?
    private var idleTimer: ScheduledTimer?
    private let idleTimeout: Duration
    /// Told once when this connection stops taking new requests (closing, closed, or the server said so).
    private let onUnusable: @Sendable () -> Void
    private var reportedUnusable = false

    init(clock: any TimePort, idleTimeout: Duration, onUnusable: @escaping @Sendable () -> Void) {
        self.clock = clock
        self.idleTimeout = idleTimeout
        self.onUnusable = onUnusable
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        armIdleTimer()
    }

    /// Sends `request`; `promise` gets the answer or an `UpstreamStreamFailure`.
    func start(_ request: UpstreamRequest, deadline: ContinuousClock.Instant, promise: EventLoopPromise<UpstreamResponse>) {
        guard let context else {
            // Closed before this request got to it: nothing was written, so another connection may take it.
            promise.fail(Machine.Failure.notProcessed)
            return
        }
        let now = clock.instant
        if let failure = machine.start(promise, deadline: deadline, now: now) {
            promise.fail(failure)
            return
        }
        idleTimer?.cancel()
        idleTimer = nil
        context.write(wrapOutboundOut(.head(request.http1Head)), promise: nil)
        if request.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(request.body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        deadlineTimer = clock.schedule(after: now.duration(to: deadline), on: context.eventLoop.assumeIsolated()) {
            self.deadlineTimer = nil
            guard let context = self.context else { return }
            self.perform(self.machine.expire(now: self.clock.instant), context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            perform(machine.receivedHead(head), context: context)
        case .body(let bytes):
            perform(machine.receivedBody(bytes), context: context)
        case .end:
            perform(machine.receivedEnd(), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        reportUnusable()
        idleTimer?.cancel()
        perform(machine.closed(), context: context)
        self.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A malformed answer, TLS, the socket: the connection is done; the waiting request fails when it closes.
        reportUnusable()
        context.close(promise: nil)
    }

    private func perform(_ action: Machine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            return
        case .close:
            reportUnusable()
            context.close(promise: nil)
        case .succeed(let promise, let response, let close):
            finish(close: close, context: context)
            promise.succeed(response)
        case .fail(let promise, let failure, let close):
            finish(close: close, context: context)
            promise.fail(failure)
        }
    }

    /// The exchange is over: the connection closes, or waits for the next request. The unusable report comes
    /// before the promise completes, so the pool never hands out a connection that is closing.
    private func finish(close: Bool, context: ChannelHandlerContext) {
        deadlineTimer?.cancel()
        deadlineTimer = nil
        if close {
            reportUnusable()
            context.close(promise: nil)
        } else {
            armIdleTimer()
        }
    }

    /// A connection with no request for `idleTimeout` is closed.
    private func armIdleTimer() {
        guard let context, idleTimer == nil, machine.isIdle else { return }
        idleTimer = clock.schedule(after: idleTimeout, on: context.eventLoop.assumeIsolated()) {
            self.idleTimer = nil
            guard self.machine.isIdle else { return }
            self.reportUnusable()
            self.context?.close(promise: nil)
        }
    }

    private func reportUnusable() {
        guard !reportedUnusable else { return }
        reportedUnusable = true
        onUnusable()
    }
}

@available(*, unavailable)
extension UpstreamHTTP1Handler: Sendable {}

extension UpstreamRequest {
    /// The HTTP/1.1 request head: `Host`, the headers and the body's length.
    var http1Head: HTTPRequestHead {
        var fields = HTTPHeaders()
        fields.reserveCapacity(headers.count + 2)
        fields.add(name: "host", value: origin.authority)
        for (name, value) in headers { fields.add(name: name, value: value) }
        if body.readableBytes > 0 || method == "POST" {
            fields.add(name: "content-length", value: String(body.readableBytes))
        }
        return HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: fields)
    }
}
