import Foundation

/// The time everything in PushRelay runs on: the wall time (`now()`: days, expiries, timestamps), the monotonic
/// instant deadlines are measured on (`instant`), and timers (`schedule(after:)`, `sleep(for:)`). Every handler,
/// service and engine is given one. A running server's is `EventLoopClock` (the system's time, timers on NIO's event
/// loops); tests pass a `ManualClock`, which moves and fires what is due only when the test advances it, so that
/// timeouts and day boundaries are tested without waiting.
public protocol TimePort: Sendable {
    /// The wall time.
    func now() -> Date

    /// Now, on the monotonic clock this port's timers run on: a deadline is `instant + duration`, what is left of it
    /// `instant.duration(to: deadline)`.
    var instant: ContinuousClock.Instant { get }

    /// Calls `body` once, `delay` from now, unless the returned timer is cancelled first. `body` must not block:
    /// it hands any slow work on (for example to a `BackgroundWork` queue).
    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer
}

/// A scheduled call that may still be cancelled.
public struct ScheduledTimer: Sendable {
    private let cancelling: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) {
        self.cancelling = cancel
    }

    /// Stops the call if it has not run yet; does nothing otherwise.
    public func cancel() { cancelling() }
}

extension TimePort {
    /// Suspends for `delay` on this port's timers; throws `CancellationError` at once when the task is cancelled.
    public func sleep(for delay: Duration) async throws {
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                guard sleeper.start(c) else { return }
                let timer = schedule(after: delay) { sleeper.finish(throwing: nil) }
                sleeper.attach(timer)
            }
        } onCancel: {
            sleeper.finish(throwing: CancellationError())
        }
    }
}

/// One sleep's continuation, resumed once: by its timer or by cancellation, whichever comes first.
private final class Sleeper: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: ScheduledTimer?
        var done = false
    }

    private let state = Locked(State())

    /// False when cancellation came first (the continuation is then resumed already).
    func start(_ c: CheckedContinuation<Void, any Error>) -> Bool {
        let cancelled = state.withLock { s -> Bool in
            if s.done { return true }
            s.continuation = c
            return false
        }
        if cancelled { c.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func attach(_ timer: ScheduledTimer) {
        let cancelNow = state.withLock { s -> Bool in
            if s.done { return true }
            s.timer = timer
            return false
        }
        if cancelNow { timer.cancel() }
    }

    func finish(throwing error: (any Error)?) {
        let (c, timer) = state.withLock { s -> (CheckedContinuation<Void, any Error>?, ScheduledTimer?) in
            guard !s.done else { return (nil, nil) }
            s.done = true
            defer { s.continuation = nil }
            return (s.continuation, s.timer)
        }
        timer?.cancel()
        if let error { c?.resume(throwing: error) } else { c?.resume() }
    }
}
