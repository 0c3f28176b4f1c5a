import Foundation
import GRDB
import PushRelayCore
import PushRelayStore
import Synchronization

/// Follows the outcome of the group commit's transactions and syncs for `StorageHealth`: a storage error (disk full,
/// read-only, I/O, a locked or unusable file, a failed WAL sync) makes it `failing`, the next durable write `ok`.
final class StorageFaultTracker: Sendable {
    private let state = Locked(StorageHealth.ok)
    /// Read without the lock on the hot path: `succeeded()` takes the lock only when there is a fault to clear.
    private let faulty = Atomic<Bool>(false)

    var current: StorageHealth { state.withLock { $0 } }

    /// A transaction that wrote committed and its WAL sync succeeded.
    func succeeded() {
        guard faulty.load(ordering: .relaxed) else { return }
        state.withLock { $0 = .ok }
        faulty.store(false, ordering: .relaxed)
    }

    /// A write failed; only storage errors count (see `isFault`).
    func failed(_ error: any Error, now: Date = Date()) {
        guard let message = Self.faultMessage(error) else { return }
        state.withLock { s in
            if s.state == .ok { s = StorageHealth(state: .failing, since: now, message: message) } else { s.message = message }
        }
        faulty.store(true, ordering: .relaxed)
    }

    /// A description of `error` if it is a storage fault, nil if it is a rule (a constraint, a bad argument).
    static func faultMessage(_ error: any Error) -> String? {
        if let store = error as? StoreError { return store.description }
        if error is StorageError { return nil }
        guard let db = error as? DatabaseError else { return nil }
        switch db.resultCode.primaryResultCode {
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_BUSY,
            .SQLITE_LOCKED, .SQLITE_PERM, .SQLITE_NOMEM:
            return "SQLite error \(db.resultCode.rawValue): \(db.message ?? "\(db.resultCode)")"
        default:
            return nil
        }
    }
}
