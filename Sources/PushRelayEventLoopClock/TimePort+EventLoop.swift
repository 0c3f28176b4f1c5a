import NIOCore
import PushRelayCore

extension TimePort {
    /// Calls `body` on `loop`, `delay` from now, unless the returned timer is cancelled first: for what must run on a
    /// channel's event loop (a handler's state). On `EventLoopClock` it is an entry in `loop`'s own timer queue; any
    /// other port's timer (a test's `ManualClock`) calls `body` at once when it fires on `loop`'s thread (an
    /// `EmbeddedEventLoop` in the test's thread), and hops to `loop` otherwise.
    @discardableResult
    public func schedule(after delay: Duration, on loop: any EventLoop, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        if self is EventLoopClock {
            let scheduled = loop.scheduleTask(in: TimeAmount(delay), body)
            return ScheduledTimer { scheduled.cancel() }
        }
        return schedule(after: delay) {
            if loop.inEventLoop { body() } else { loop.execute(body) }
        }
    }

    /// `schedule(after:on:)` for a body that is not `Sendable`, from code already on `loop` (a channel handler):
    /// `body` runs on `loop` only.
    @discardableResult
    public func schedule(after delay: Duration, on loop: NIOIsolatedEventLoop, _ body: @escaping () -> Void) -> ScheduledTimer {
        if self is EventLoopClock {
            let scheduled = loop.scheduleTask(in: TimeAmount(delay), body)
            return ScheduledTimer { scheduled.cancel() }
        }
        let bound = NIOLoopBound(body, eventLoop: loop.nonisolated())
        return schedule(after: delay, on: loop.nonisolated()) { bound.value() }
    }

    /// Calls `body` on `loop` every `interval` (the first time `interval` from now) until the returned timer is
    /// cancelled; from code already on `loop`.
    public func scheduleRepeating(every interval: Duration, on loop: NIOIsolatedEventLoop, _ body: @escaping () -> Void) -> ScheduledTimer {
        let repeating = NIOLoopBound(RepeatingTimer(), eventLoop: loop.nonisolated())
        let bound = NIOLoopBound(body, eventLoop: loop.nonisolated())
        repeating.value.arm(self, every: interval, on: loop, body: bound)
        let target = loop.nonisolated()
        return ScheduledTimer {
            if target.inEventLoop { repeating.value.cancel() } else { target.execute { repeating.value.cancel() } }
        }
    }
}

/// The timer of `scheduleRepeating`: each run schedules the next, on one loop.
private final class RepeatingTimer {
    private var current: ScheduledTimer?
    private var cancelled = false

    func arm(_ clock: some TimePort, every interval: Duration, on loop: NIOIsolatedEventLoop, body: NIOLoopBound<() -> Void>) {
        guard !cancelled else { return }
        current = clock.schedule(after: interval, on: loop) { [self] in
            guard !cancelled else { return }
            body.value()
            arm(clock, every: interval, on: loop, body: body)
        }
    }

    func cancel() {
        cancelled = true
        current?.cancel()
        current = nil
    }
}
