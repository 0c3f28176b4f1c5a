import Foundation
import PushRelayCore
import PushRelayStore
import Synchronization

/// `StorageHealth` for PostgreSQL, with the SQLite tracker's rules: a storage fault (no connection, a lost one, disk
/// full, read-only, I/O) makes it `failing`; the next write that succeeds makes it `ok`. Rules (constraints) are not
/// faults.
final class PostgresFaultTracker: Sendable {
    private let state = Locked(StorageHealth.ok)
    /// Read without the lock on the hot path: `succeeded()` takes the lock only when there is a fault to clear.
    private let faulty = Atomic<Bool>(false)

    var current: StorageHealth { state.withLock { $0 } }
    /// Whether a fault is known (cheap: no lock).
    var isFaulty: Bool { faulty.load(ordering: .relaxed) }

    /// A write went through.
    func succeeded() {
        guard faulty.load(ordering: .relaxed) else { return }
        state.withLock { $0 = .ok }
        faulty.store(false, ordering: .relaxed)
    }

    /// A request failed; only storage faults count.
    func failed(_ error: any Error, now: Date = Date()) {
        let message: String
        switch error {
        case let e as PostgresStoreError where e.isFault: message = e.description
        case let e as StorageError where e != .closed: message = e.description
        default: return
        }
        state.withLock { s in
            if s.state == .ok { s = StorageHealth(state: .failing, since: now, message: message) } else { s.message = message }
        }
        faulty.store(true, ordering: .relaxed)
    }
}
