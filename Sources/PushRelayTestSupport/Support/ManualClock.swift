import Foundation
import PushRelayCore

/// A `WallClock` and `TimerScheduling` that tests move by hand: share one between a provider and a fake to step
/// through token lifetimes, or give it to the server so that its timeouts fire when the test advances the clock,
/// without sleeping.
public final class ManualClock: WallClock, TimerScheduling, Sendable {
    private struct Timer {
        let id: Int
        let due: Date
        let body: @Sendable () -> Void
    }

    private struct State {
        var now: Date
        var timers: [Timer] = []
        var nextID = 0
    }

    private let state: Locked<State>
    private let start: Date
    private let origin = ContinuousClock.now

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.start = start
        state = Locked(State(now: start))
    }

    /// Moves with the clock's time (`advance`, `set`), not with the wall clock.
    public var instant: ContinuousClock.Instant {
        origin + .milliseconds(Int64((now().timeIntervalSince(start) * 1000).rounded()))
    }

    public func now() -> Date { state.withLock { $0.now } }

    /// Timers scheduled and neither fired nor cancelled.
    public var scheduledCount: Int { state.withLock { $0.timers.count } }

    /// Moves the clock on, then runs every timer now due, earliest first, on the caller's thread.
    public func advance(by seconds: TimeInterval) {
        let due = state.withLock { s -> [Timer] in
            s.now = s.now.addingTimeInterval(seconds)
            let now = s.now
            let due = s.timers.filter { $0.due <= now }.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
            s.timers.removeAll { $0.due <= now }
            return due
        }
        for timer in due { timer.body() }
    }

    /// Sets the time without running timers.
    public func set(_ date: Date) {
        state.withLock { $0.now = date }
    }

    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            s.timers.append(Timer(id: s.nextID, due: s.now.addingTimeInterval(seconds), body: body))
            return s.nextID
        }
        return ScheduledTimer { [weak self] in
            self?.state.withLock { $0.timers.removeAll { $0.id == id } }
        }
    }
}
