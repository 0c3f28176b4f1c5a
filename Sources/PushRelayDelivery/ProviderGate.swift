import PushRelayCore

/// Bounds the dispatches in flight to one provider (`delivery.max_in_flight`). Past the bound a dispatch waits for a
/// place, in its client's line (`FairWaitingLine`: the clients take turns), for `delivery.max_wait_ms` at most; only
/// one that could not get a place in that time is refused. A waiting dispatch costs a suspended task and nothing
/// else, and its connection reads nothing more until it is answered, so waiting clients do not resend.
package final class ProviderGate: Sendable {
    private struct State {
        var line: FairWaitingLine<CheckedContinuation<Bool, Never>>
        var nextID: UInt64 = 0
        /// The timer that refuses waiters whose wait has ended, while anyone waits.
        var timer: ScheduledTimer?
        var timerDeadline: ContinuousClock.Instant?
    }

    private let state: Locked<State>
    package let limit: Int
    package let maxWait: Duration
    private let clock: any TimePort

    /// - Parameter clock: where the end of a wait is timed (the dispatcher's clock).
    package init(limit: Int, maxWait: Duration, clock: any TimePort) {
        self.limit = limit
        self.maxWait = maxWait
        self.clock = clock
        state = Locked(State(line: FairWaitingLine(limit: limit, maxWait: maxWait)))
    }

    /// Takes a place, waiting for one up to `maxWait` in the line of `client` (the request's address, an IPv6 client's
    /// by its /64 as `AddressKey.key(for:)` counts it; one shared line when nil). True: the caller holds a place and
    /// must `release` it. False: refused (the wait ended, or the task was cancelled).
    package func acquire(client: String?) async -> Bool {
        // nil: a place was free and is taken; else the id this dispatch waits under.
        let waiting: UInt64? = state.withLock { s in
            if s.line.tryAcquire() { return nil }
            s.nextID &+= 1
            return s.nextID
        }
        guard let id = waiting else { return true }
        let line = client.map(AddressKey.key) ?? ""
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
                // nil: queued, resumed later by `release`, the expiry timer or the cancellation handler.
                let answer: Bool? = state.withLock { s in
                    // Checked under the lock: a cancellation handler that runs after this finds the waiter queued.
                    if Task.isCancelled { return false }
                    if s.line.acquire(client: line, id: id, now: clock.instant, waiter: waiter) { return true }
                    scheduleExpiry(&s)
                    return nil
                }
                if let answer { waiter.resume(returning: answer) }
            }
        } onCancel: {
            state.withLock { $0.line.remove(id: id) }?.resume(returning: false)
        }
    }

    /// Gives back a place `acquire` gave; the next waiter in turn gets it.
    package func release() {
        state.withLock { $0.line.release() }?.resume(returning: true)
    }

    /// Dispatches waiting for a place now.
    package var waiting: Int { state.withLock { $0.line.waiting } }

    /// Arms the timer for the earliest wait's end when none is armed for it. Called with the lock held.
    private func scheduleExpiry(_ s: inout State) {
        guard let deadline = s.line.nextDeadline() else { return }
        if let armed = s.timerDeadline, armed <= deadline { return }
        s.timer?.cancel()
        s.timerDeadline = deadline
        s.timer = clock.schedule(after: clock.instant.duration(to: deadline) + .nanoseconds(1)) { [self] in
            expire()
        }
    }

    /// Refuses the waiters whose wait has ended, and arms the timer for the next one.
    private func expire() {
        let due = state.withLock { s in
            s.timer = nil
            s.timerDeadline = nil
            let due = s.line.expire(now: clock.instant)
            scheduleExpiry(&s)
            return due
        }
        for waiter in due { waiter.resume(returning: false) }
    }
}
