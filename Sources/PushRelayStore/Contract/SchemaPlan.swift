/// One row of `schema_migrations`: a migration applied to the database.
public struct AppliedMigration: Sendable, Equatable {
    public var version: Int
    /// The schema a binary must know to run on the database after this migration (`MigrationKind.requires`); nil
    /// in rows recorded before PushRelay kept it, which count as their own version.
    public var requires: Int?

    public init(version: Int, requires: Int?) {
        self.version = version
        self.requires = requires
    }
}

/// How a command treats the database's schema when it opens it.
public enum SchemaStep: Sendable, Equatable {
    /// Changes nothing: refuses a schema older than this binary's (`StorageError.schemaTooOld`) or one it cannot run
    /// on (`StorageError.schemaTooNew`). Every command but `serve` and `migrate`.
    case check
    /// Applies the pending `.breaking` and `.expand` migrations (every migration, on a new database); contract
    /// migrations wait. `serve` and `migrate`.
    case upgrade
    /// Applies every pending migration, the contract ones included, once no instance older than they require is
    /// alive. `migrate --finish`.
    case finish
}

/// The rules of rolling upgrades, decided from what the database has applied and what this binary carries; the
/// engines read `schema_migrations` and run what the plan says.
///
/// A binary runs on a database when it knows the schema the database requires: the highest `requires` of its applied
/// migrations. So an older binary keeps serving once a newer one has applied `.expand` migrations, and is refused
/// only after `migrate --finish` applied a contract migration it does not know.
public struct SchemaPlan: Sendable {
    /// The migrations this binary carries.
    public let carried: [Migration]

    public init(carried: [Migration]) {
        self.carried = carried.sorted { $0.version < $1.version }
    }

    /// The newest schema version this binary knows.
    public var known: Int { carried.last?.version ?? 0 }

    /// The schema a binary must know to run on a database that applied `applied` (0 for an empty one).
    public static func required(by applied: [AppliedMigration]) -> Int {
        applied.map { $0.requires ?? $0.version }.max() ?? 0
    }

    /// `StorageError.schemaTooNew` when this binary cannot run on a database that applied `applied`.
    public func tooNew(_ applied: [AppliedMigration]) -> StorageError? {
        let required = Self.required(by: applied)
        return required > known ? .schemaTooNew(found: required, known: known) : nil
    }

    /// The migrations `step` applies to a database that applied `applied`, oldest first (none for `.check`).
    public func pending(_ applied: [AppliedMigration], step: SchemaStep) -> [Migration] {
        let done = Set(applied.map(\.version))
        let missing = carried.filter { !done.contains($0.version) }
        switch step {
        case .check: return []
        case .finish: return missing
        case .upgrade:
            // A new database has no older instance to wait for.
            if applied.isEmpty { return missing }
            return missing.filter { if case .contract = $0.kind { false } else { true } }
        }
    }

    /// `StorageError.schemaTooOld` when the database lacks a migration this binary needs (one `serve` would apply),
    /// for the commands that do not migrate.
    public func tooOld(_ applied: [AppliedMigration]) -> StorageError? {
        let needed = pending(applied, step: .upgrade)
        guard let newest = needed.last?.version else { return nil }
        let found = applied.map(\.version).max() ?? 0
        return .schemaTooOld(found: found, needs: newest)
    }

    /// Why `step` may not run on a database that applied `applied` (nil: it may): a schema this binary cannot run on,
    /// or, for `.check`, one older than it needs. Both engines ask this before they apply anything.
    public func refusal(_ applied: [AppliedMigration], step: SchemaStep) -> StorageError? {
        step == .check ? tooNew(applied) ?? tooOld(applied) : tooNew(applied)
    }

    /// The schema every live instance must know before `migrate --finish` may apply the pending contract migrations
    /// (nil: none is pending).
    public func finishNeeds(_ applied: [AppliedMigration]) -> Int? {
        pending(applied, step: .finish).compactMap { m -> Int? in
            if case .contract(let requires) = m.kind { requires } else { nil }
        }.max()
    }
}
