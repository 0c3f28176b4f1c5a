import GRDB
import PushRelayStore

/// What went wrong with the SQLite database file itself. The errors every engine shares are `StorageError`s.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    case cannotOpen(path: String, underlying: String)
    /// The WAL could not be synced to disk: the transaction committed, but its durability is unknown.
    case syncFailed(path: String, underlying: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let e): return "cannot open SQLite database at '\(path)': \(e)"
        case .syncFailed(let path, let e): return "could not sync the SQLite WAL '\(path)' to disk: \(e)"
        }
    }
}

extension StoreError: StorageFailure {}
extension DatabaseError: StorageFailure {}
