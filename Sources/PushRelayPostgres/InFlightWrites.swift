import PushRelayCore

/// The fire-and-forget writes still running (delivered records, channel counters), so that `flush` can wait for every
/// write started before it.
final class InFlightWrites: Sendable {
    private struct State {
        var next: UInt64 = 0
        var running: Set<UInt64> = []
        var waiters: [(upTo: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Runs `work` in a task of its own, tracked until it ends.
    func start(_ work: @escaping @Sendable () async -> Void) {
        let id = begin()
        Task {
            await work()
            self.finished(id)
        }
    }

    private func begin() -> UInt64 {
        state.withLock { s -> UInt64 in
            s.next += 1
            s.running.insert(s.next)
            return s.next
        }
    }

    /// Returns once every write started before the call has ended.
    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                let upTo = s.next
                if s.running.allSatisfy({ $0 > upTo }) { return true }
                s.waiters.append((upTo, c))
                return false
            }
            if ready { c.resume() }
        }
    }

    private func finished(_ id: UInt64) {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.running.remove(id)
            let oldest = s.running.min() ?? .max
            var ready: [CheckedContinuation<Void, Never>] = []
            s.waiters.removeAll { w in
                guard oldest > w.upTo else { return false }
                ready.append(w.continuation)
                return true
            }
            return ready
        }
        for c in ready { c.resume() }
    }
}
