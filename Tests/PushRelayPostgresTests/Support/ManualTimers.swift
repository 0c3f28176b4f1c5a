import PushRelayCore

/// A `TimerScheduling` that a test moves by hand, for the engine's waits in simulated time: a timer fires when
/// `advance` reaches its due time, on the caller's thread, and `nextScheduled` waits for the engine to schedule one.
final class ManualTimers: TimerScheduling {
    private struct Timer {
        let id: Int
        let due: Duration
        let delay: Duration
        let body: @Sendable () -> Void
    }

    private struct State {
        var now = Duration.zero
        var pending: [Timer] = []
        var nextID = 0
        /// The delay of every timer scheduled, in order.
        var scheduled: [Duration] = []
        /// How many of `scheduled` `nextScheduled` has handed out or passed over.
        var seen = 0
        var waiter: (matches: @Sendable (Duration) -> Bool, continuation: CheckedContinuation<Duration, Never>)?
    }

    private let state = Locked(State())

    /// The delays of the timers scheduled and neither fired nor cancelled, earliest due first.
    var pendingDelays: [Duration] {
        state.withLock { s in s.pending.sorted { ($0.due, $0.id) < ($1.due, $1.id) }.map(\.delay) }
    }

    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let (id, woken) = state.withLock { s -> (Int, (CheckedContinuation<Duration, Never>, Duration)?) in
            s.nextID += 1
            s.pending.append(Timer(id: s.nextID, due: s.now + delay, delay: delay, body: body))
            s.scheduled.append(delay)
            return (s.nextID, Self.match(&s))
        }
        if let (continuation, delay) = woken { continuation.resume(returning: delay) }
        return ScheduledTimer { [weak self] in
            self?.state.withLock { $0.pending.removeAll { $0.id == id } }
        }
    }

    /// Moves the time on by `duration`, then runs every timer now due, earliest first.
    func advance(by duration: Duration) {
        let due = state.withLock { s -> [Timer] in
            s.now += duration
            let now = s.now
            let due = s.pending.filter { $0.due <= now }.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
            s.pending.removeAll { $0.due <= now }
            return due
        }
        for timer in due { timer.body() }
    }

    /// The delay of the next timer scheduled that `matches` it (earlier ones that do not are passed over), waiting
    /// until one is. "Next": after the one this call returned last time.
    func nextScheduled(where matches: @escaping @Sendable (Duration) -> Bool) async -> Duration {
        await withCheckedContinuation { continuation in
            let found = state.withLock { s -> (CheckedContinuation<Duration, Never>, Duration)? in
                precondition(s.waiter == nil, "one waiter at a time")
                s.waiter = (matches, continuation)
                return Self.match(&s)
            }
            if let (continuation, delay) = found { continuation.resume(returning: delay) }
        }
    }

    /// The waiter and the delay it waited for, once a timer it matches has been scheduled.
    private static func match(_ s: inout State) -> (CheckedContinuation<Duration, Never>, Duration)? {
        guard let waiter = s.waiter else { return nil }
        while s.seen < s.scheduled.count {
            let delay = s.scheduled[s.seen]
            s.seen += 1
            if waiter.matches(delay) {
                s.waiter = nil
                return (waiter.continuation, delay)
            }
        }
        return nil
    }
}
