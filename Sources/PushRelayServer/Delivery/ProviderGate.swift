import PushRelayCore

/// Bounds the dispatches in flight to one provider, so that a slow or failing upstream, or a machine past its
/// capacity, cannot absorb every request: past the bound, dispatches are refused at once (503 `ProviderBusy`) instead
/// of queueing. While it refuses, the bound follows the queueing the dispatches see (`AdaptiveConcurrencyLimit`),
/// between 8 and `delivery.max_in_flight`.
final class ProviderGate: Sendable {
    private struct State {
        var inFlight = 0
        var adaptive: AdaptiveConcurrencyLimit
    }

    private let state: Locked<State>
    private let origin = ContinuousClock.now

    init(limit: Int) {
        state = Locked(State(adaptive: AdaptiveConcurrencyLimit(minimum: min(8, limit), maximum: limit)))
    }

    /// The bound right now.
    var limit: Int { state.withLock { $0.adaptive.current } }

    /// Takes a place if there is one, and returns when it did; nil: refused.
    func tryAcquire() -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let seconds = (now - origin).seconds
        return state.withLock { s in
            guard s.adaptive.acquire(inFlight: s.inFlight, now: seconds) else { return nil }
            s.inFlight += 1
            return now
        }
    }

    /// Whether `tryAcquire` would refuse now; a yes counts as a refusal for the bound's adaptation, as it is one.
    func refusesNow() -> Bool {
        let seconds = (ContinuousClock.now - origin).seconds
        return state.withLock { s in !s.adaptive.acquire(inFlight: s.inFlight, now: seconds) }
    }

    /// Gives back the place `tryAcquire` gave at `admitted`.
    func release(admitted: ContinuousClock.Instant) {
        let end = ContinuousClock.now
        let now = (end - origin).seconds
        state.withLock { s in
            s.inFlight -= 1
            s.adaptive.record(latency: (end - admitted).seconds, now: now)
        }
    }
}
