/// Runs a closure once after a delay. The server schedules on its event loops; tests pass a `ManualClock`, which
/// fires what is due when it is advanced, so timeouts are tested in simulated time.
public protocol TimerScheduling: Sendable {
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
