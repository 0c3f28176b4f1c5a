import PushRelayCore

/// Bounds the dispatches in flight to one provider, so that a slow or failing upstream, or a machine past its
/// capacity, cannot absorb every request: past the bound, dispatches are refused at once (503 `ProviderBusy`) instead
/// of queueing. The bound adapts to the latency the dispatches see (`AdaptiveConcurrencyLimit`), between 32 and
/// `delivery.max_in_flight`.
final class ProviderGate: Sendable {
    private struct State {
        var inFlight = 0
        var adaptive: AdaptiveConcurrencyLimit
    }

    private let state: Locked<State>

    init(limit: Int) {
        state = Locked(State(adaptive: AdaptiveConcurrencyLimit(minimum: min(32, limit), maximum: limit)))
    }

    /// The bound right now.
    var limit: Int { state.withLock { $0.adaptive.current } }
    var current: Int { state.withLock { $0.inFlight } }

    /// Takes a place if there is one; returns how many were in flight before (nil: refused).
    func tryAcquire() -> Int? {
        state.withLock { s in
            guard s.inFlight < s.adaptive.current else { return nil }
            s.inFlight += 1
            return s.inFlight - 1
        }
    }

    /// Gives the place back; `latency` (seconds) is how long the dispatch held it, `inFlight` what `tryAcquire` said.
    func release(latency: Double, inFlight: Int) {
        state.withLock { s in
            s.inFlight -= 1
            s.adaptive.record(latency: latency, inFlight: inFlight + 1)
        }
    }
}
