/// The errors every storage engine reports the same way, so that callers never need an engine's own error type.
/// Each engine's own faults (a file that cannot be opened, a server that cannot be reached) are its own types, and
/// every one of them is a `StorageFailure`.
public enum StorageError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The storage was closed (the server is stopping); nothing more is carried out.
    case closed
    /// The database requires a schema newer than this build knows (`found`): a newer PushRelay applied a migration
    /// this one cannot run after, a breaking one or a contract one (`SchemaPlan`).
    case schemaTooNew(found: Int, known: Int)
    /// The database lacks migrations this build needs (it is at `found`, this build needs `needs`), and the command
    /// does not migrate: only `serve` and `migrate` do.
    case schemaTooOld(found: Int, needs: Int)
    /// `migrate --finish` would apply migrations that need instances to know schema `needs`, and these live instances
    /// (their ids, with the schema each knows; nil: a PushRelay too old to say) do not.
    case olderInstancesAlive(needs: Int, instances: [String: Int?])
    /// A schema migration failed; `underlying` says why, without secrets.
    case migrationFailed(name: String, underlying: String)
    /// Row `id` of `table` holds `value` in `column`, a value no build of PushRelay writes there. `id` is the row's
    /// key as text (a delivery-log row's number, a device's or a message's id).
    case unreadableRow(table: String, id: String, column: String, value: String)

    public var description: String {
        switch self {
        case .closed:
            return "the database is closed"
        case .schemaTooNew(let found, let known):
            return
                "the database schema needs a PushRelay that knows schema version \(found) or later, and this one knows \(known): a newer PushRelay applied a migration this one cannot run after (a breaking one, or a contract one with migrate --finish); upgrade this one to that version"
        case .schemaTooOld(let found, let needs):
            return
                "the database schema is at version \(found) and this PushRelay needs \(needs): run 'pushrelay migrate' (or start 'pushrelay serve'), which migrates it"
        case .olderInstancesAlive(let needs, let instances):
            let list = instances.sorted { $0.key < $1.key }.map { id, known in "\(id) (schema \(known.map(String.init) ?? "unknown"))" }
            return
                "the pending migrations need every instance to know schema version \(needs), and \(instances.count) older instance(s) are alive: \(list.joined(separator: ", ")); replace them with this version first"
        case .migrationFailed(let name, let underlying):
            return "migration \(name) failed: \(underlying)"
        case .unreadableRow(let table, let id, let column, let value):
            return "row \(id) of \(table) holds '\(value)' in \(column), a value this PushRelay cannot read"
        }
    }
}

extension StorageError {
    /// `unreadableRow` of a table keyed by a number.
    public static func unreadableRow(table: String, id: Int64, column: String, value: String) -> StorageError {
        .unreadableRow(table: table, id: String(id), column: column, value: value)
    }
}

extension StorageError: StorageFailure {
    public var meansClosed: Bool { self == .closed }
}
