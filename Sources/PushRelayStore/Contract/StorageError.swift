/// The errors every storage engine reports the same way, so that callers never need an engine's own error type.
/// Each engine's own faults (a file that cannot be opened, a server that cannot be reached) are its own types, and
/// every one of them is a `StorageFailure`.
public enum StorageError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The storage was closed (the server is stopping); nothing more is carried out.
    case closed
    /// The database's schema is newer than this build knows: a newer PushRelay migrated it.
    case schemaTooNew(found: Int, known: Int)
    /// A schema migration failed; `underlying` says why, without secrets.
    case migrationFailed(name: String, underlying: String)
    /// A row holds a value no build of PushRelay writes there.
    case unreadableRow(table: String, id: Int64)

    public var description: String {
        switch self {
        case .closed:
            return "the database is closed"
        case .schemaTooNew(let found, let known):
            return
                "the database schema is at version \(found), newer than this PushRelay knows (\(known)): a newer version of PushRelay migrated it; upgrade this one to that version"
        case .migrationFailed(let name, let underlying):
            return "migration \(name) failed: \(underlying)"
        case .unreadableRow(let table, let id):
            return "row \(id) of \(table) holds a value this PushRelay cannot read"
        }
    }
}

extension StorageError: StorageFailure {
    public var meansClosed: Bool { self == .closed }
}
