import NIOCore
import NIOHTTP2
import PushRelayCore
import PushRelayEventLoopClock

/// Sends requests to a provider as HTTP/2 streams on one connection and completes each with its answer.
///
/// It sits after `NIOHTTP2Handler` and works on frames: a request is one HEADERS frame and one DATA frame on a new
/// stream ID, with no channel per stream. Writes are flushed once per event-loop turn, so requests started together
/// share TLS records and system calls. `UpstreamHTTP2StateMachine` keeps the books; this handler only does what it
/// says. All its methods run on the channel's event loop; its timers run on `clock`, which also tells it the time.
///
/// While requests wait and nothing arrives for `pingAfter`, it sends a PING; when that goes unanswered for
/// `pingTimeout`, the connection is dead (a NAT or load balancer dropped the flow without a word): it stops taking
/// requests, its waiting requests fail with `connectionDead` and it closes, so that the pool opens another.
final class UpstreamHTTP2Handler: ChannelInboundHandler, UpstreamExchangeHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    typealias Machine = UpstreamHTTP2StateMachine<EventLoopPromise<UpstreamResponse>>

    /// How often deadlines are checked while requests are waiting.
    static let deadlineTick = Duration.milliseconds(25)

    private var machine = Machine()
    private var context: ChannelHandlerContext?
    private var flushScheduled = false
    private let clock: any TimePort
    private var deadlineTimer: ScheduledTimer?
    private var idleTimer: ScheduledTimer?
    private let idleTimeout: Duration
    /// Told once when this connection stops taking new requests (GOAWAY, close, stream IDs spent).
    private let onUnusable: @Sendable () -> Void
    private var reportedUnusable = false
    /// Told once when this connection is found dead, with how many requests were waiting on it.
    private let onDead: @Sendable (Int) -> Void
    /// Told at the first GOAWAY.
    private let onGoAway: @Sendable () -> Void
    private let pingAfter: Duration
    private let pingTimeout: Duration
    private var pingsSent: UInt64 = 0
    /// Told once, when the server's first SETTINGS frame arrives (nil once told).
    private var onSettings: (() -> Void)?
    private var settingsReceived = false
    /// Frames of this handler's that NIOHTTP2 refused and whose error `errorCaught` has still to be told.
    private var refusedWrites = 0

    /// A silent connection with requests waiting is pinged after this…
    static let defaultPingAfter = Duration.seconds(1)
    /// …and given up when the PING is not answered within this.
    static let defaultPingTimeout = Duration.seconds(2)

    init(
        clock: any TimePort,
        idleTimeout: Duration,
        pingAfter: Duration = UpstreamHTTP2Handler.defaultPingAfter,
        pingTimeout: Duration = UpstreamHTTP2Handler.defaultPingTimeout,
        onDead: @escaping @Sendable (Int) -> Void = { _ in },
        onGoAway: @escaping @Sendable () -> Void = {},
        onUnusable: @escaping @Sendable () -> Void
    ) {
        self.clock = clock
        self.idleTimeout = idleTimeout
        self.pingAfter = pingAfter
        self.pingTimeout = pingTimeout
        self.onDead = onDead
        self.onGoAway = onGoAway
        self.onUnusable = onUnusable
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The connection window starts at 64 KiB whatever the settings say; raise it once so that answers are never
        // held back by it.
        let raise = Self.connectionWindow - 65_535
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: raise))), promise: nil)
        armIdleTimer()
    }

    /// The inbound window this client grants the whole connection.
    static let connectionWindow = 1 << 20

    /// What this client tells the server: no server push, and stream windows large enough for any provider answer.
    static let settings: HTTP2Settings = [
        HTTP2Setting(parameter: .enablePush, value: 0),
        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
    ]

    /// Calls `body` once the server's first SETTINGS frame has arrived (at once if it has).
    func whenSettingsReceived(_ body: @escaping () -> Void) {
        if settingsReceived { return body() }
        onSettings = body
    }

    /// Sends `request` on a new stream; `promise` gets the answer or an `UpstreamHTTP2StateMachine.Failure`.
    func start(_ request: UpstreamRequest, deadline: ContinuousClock.Instant, promise: EventLoopPromise<UpstreamResponse>) {
        guard let context else {
            // The connection closed before this request got to it: nothing was written, so it is safe to send on
            // another connection.
            promise.fail(Machine.Failure.notSent)
            return
        }
        switch machine.start(promise, deadline: deadline, now: clock.instant) {
        case .failure(let failure):
            promise.fail(failure)
        case .success(let streamID):
            idleTimer?.cancel()
            idleTimer = nil
            let hasBody = request.body.readableBytes > 0
            let head = HTTP2Frame.FramePayload.headers(.init(headers: request.headerBlock, endStream: !hasBody))
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: head)),
                promise: watchedWrite(streamID, headers: true, context: context)
            )
            if hasBody {
                let data = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(request.body), endStream: true))
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: data)),
                    promise: watchedWrite(streamID, headers: false, context: context)
                )
            }
            scheduleFlush(context: context)
            armDeadlineTimer(context: context)
            if machine.isExhausted { reportUnusable() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        machine.heard(now: clock.instant)
        switch frame.payload {
        case .headers(let headers):
            perform(machine.receivedHeaders(streamID: frame.streamID, headers: headers.headers, endStream: headers.endStream), context: context)
        case .data(let data):
            guard case .byteBuffer(let bytes) = data.data else { return }
            let (action, windowUpdate) = machine.receivedData(streamID: frame.streamID, bytes: bytes, endStream: data.endStream)
            if windowUpdate > 0 {
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: windowUpdate))),
                    promise: nil
                )
                scheduleFlush(context: context)
            }
            perform(action, context: context)
        case .settings(.settings):
            if !settingsReceived {
                settingsReceived = true
                onSettings?()
                onSettings = nil
            }
        case .rstStream(let code):
            perform(machine.receivedReset(streamID: frame.streamID, code: code), context: context)
        case .goAway(let lastStreamID, _, _):
            if machine.state == .open { onGoAway() }
            reportUnusable()
            for (promise, failure) in machine.receivedGoAway(lastStreamID: lastStreamID) { promise.fail(failure) }
            closeIfDrained(context: context)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        reportUnusable()
        deadlineTimer?.cancel()
        idleTimer?.cancel()
        for (promise, failure) in machine.closed() { promise.fail(failure) }
        self.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            // One stream broke (the server's frames for it made no sense): that request fails, the others go on.
            perform(machine.receivedReset(streamID: streamError.streamID, code: .protocolError), context: context)
            return
        }
        if refusedWrites > 0 {
            // NIOHTTP2 refused one of this handler's own frames (`watchedWrite` has dealt with its stream) and reports
            // the refusal here too. It wrote nothing and the connection is sound: the other streams go on. Closing
            // here once failed every stream still waiting on a connection that had sent GOAWAY, answered as
            // "possibly delivered" although the server was about to answer them (issue 54).
            refusedWrites -= 1
            return
        }
        // Anything else (TLS, a connection-level protocol error, the socket) ends the connection: no new request
        // goes to it, and it closes once the frames read with the error have been handed on. NIOHTTP2 reports a
        // frame on a connection it holds for finished (a RST_STREAM for a stream above a GOAWAY's last id, after the
        // others were answered) before it hands on the answers it read in the same batch; closing at once would fail
        // requests whose answers are in that batch, and a failed request that was processed is one not to send again.
        reportUnusable()
        context.eventLoop.assumeIsolated().execute {
            self.context?.close(promise: nil)
        }
    }

    private func perform(_ action: Machine.StreamAction, context: ChannelHandlerContext) {
        switch action {
        case .none:
            return
        case .succeed(let promise, let response):
            promise.succeed(response)
        case .succeedAndReset(let promise, let response, let streamID):
            reset(streamID, context: context)
            promise.succeed(response)
        case .fail(let promise, let failure):
            promise.fail(failure)
        case .failAndReset(let promise, let failure, let streamID):
            reset(streamID, context: context)
            promise.fail(failure)
        }
        closeIfDrained(context: context)
        if machine.openStreams == 0 { armIdleTimer() }
    }

    /// A promise for one of a request's frames that tells what NIOHTTP2 did with it.
    ///
    /// NIOHTTP2 refuses a frame before encoding it when the connection's state forbids it: most often a HEADERS frame
    /// it held back under the server's `SETTINGS_MAX_CONCURRENT_STREAMS` and could not send once a GOAWAY came
    /// (`CreatedStreamAfterGoaway`). It fails the frame's promise, then reports the same error to `errorCaught`. A
    /// refused HEADERS frame means the request never left: it fails as `.notSent` (tried on another connection)
    /// unless the GOAWAY already failed it so. A HEADERS frame written marks its stream sent, so that a GOAWAY tells
    /// a request the server was sent and did not process from one that never left. A refused DATA frame leaves a
    /// request the server cannot have finished reading: its stream is reset. Failures of the socket or TLS below are
    /// left to `channelInactive`.
    private func watchedWrite(_ streamID: HTTP2StreamID, headers: Bool, context: ChannelHandlerContext) -> EventLoopPromise<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        let future = promise.futureResult.assumeIsolated()
        if headers {
            future.whenSuccess { self.machine.sent(streamID: streamID) }
        }
        future.whenFailure { error in
            guard error is any NIOHTTP2Error, let context = self.context else { return }
            if !(error is NIOHTTP2Errors.StreamError) {
                // A refusal for the connection's state comes to `errorCaught` right after this, in the same call; one
                // for the stream's does not. Whatever is not told by the end of this turn is forgotten.
                if self.refusedWrites == 0 {
                    context.eventLoop.assumeIsolated().execute { self.refusedWrites = 0 }
                }
                self.refusedWrites += 1
            }
            self.perform(self.machine.refusedWrite(streamID: streamID, headers: headers), context: context)
        }
        return promise
    }

    private func reset(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        scheduleFlush(context: context)
    }

    /// One flush for every write made in this turn of the event loop.
    private func scheduleFlush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.context?.flush()
        }
    }

    private func armDeadlineTimer(context: ChannelHandlerContext) {
        guard deadlineTimer == nil else { return }
        deadlineTimer = clock.schedule(after: Self.deadlineTick, on: context.eventLoop.assumeIsolated()) {
            self.deadlineTimer = nil
            guard let context = self.context else { return }
            let now = self.clock.instant
            for (promise, streamID) in self.machine.expire(now: now) {
                self.reset(streamID, context: context)
                promise.fail(Machine.Failure.timedOut)
            }
            switch self.machine.checkLiveness(now: now, pingAfter: self.pingAfter, pingTimeout: self.pingTimeout) {
            case .none:
                break
            case .ping:
                self.pingsSent &+= 1
                let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: self.pingsSent), ack: false))
                context.write(self.wrapOutboundOut(ping), promise: nil)
                self.scheduleFlush(context: context)
            case .dead:
                self.reportUnusable()
                self.onDead(self.machine.openStreams)
                for (promise, failure) in self.machine.closed(.connectionDead) { promise.fail(failure) }
                context.close(promise: nil)
                return
            }
            if self.machine.openStreams > 0 {
                self.armDeadlineTimer(context: context)
            } else {
                self.closeIfDrained(context: context)
                self.armIdleTimer()
            }
        }
    }

    /// A connection with no request for `idleTimeout` is closed.
    private func armIdleTimer() {
        guard let context, idleTimer == nil, machine.openStreams == 0 else { return }
        idleTimer = clock.schedule(after: idleTimeout, on: context.eventLoop.assumeIsolated()) {
            self.idleTimer = nil
            guard self.machine.openStreams == 0 else { return }
            self.reportUnusable()
            self.context?.close(promise: nil)
        }
    }

    /// After a GOAWAY, the connection closes once its last stream is answered.
    private func closeIfDrained(context: ChannelHandlerContext) {
        if case .draining = machine.state, machine.openStreams == 0 {
            context.close(promise: nil)
        }
    }

    private func reportUnusable() {
        guard !reportedUnusable else { return }
        reportedUnusable = true
        onUnusable()
    }
}

@available(*, unavailable)
extension UpstreamHTTP2Handler: Sendable {}
