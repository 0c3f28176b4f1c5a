import Synchronization

/// Bounds the requests in flight to one provider, so a slow or failing upstream cannot absorb every request:
/// past the bound, requests fail fast (503) instead of queueing without limit.
final class ProviderGate: Sendable {
    let limit: Int
    private let inFlight = Mutex(0)

    init(limit: Int) { self.limit = limit }

    func tryAcquire() -> Bool {
        inFlight.withLock { n in
            guard n < limit else { return false }
            n += 1
            return true
        }
    }

    func release() { inFlight.withLock { $0 -= 1 } }

    var current: Int { inFlight.withLock { $0 } }
}
