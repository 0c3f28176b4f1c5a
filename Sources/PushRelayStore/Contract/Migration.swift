import Foundation

/// One numbered schema migration (`migrations/NNN_name.sql`, `migrations/postgres/NNN_name.sql`).
///
/// Its kind is declared by a line of the file, `-- migration: expand` or `-- migration: contract, requires N`
/// (`MigrationKind`); a file without one is `.breaking`.
public struct Migration: Sendable, Equatable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// What the migration asks of the instances running on the database (from its `-- migration:` line).
    public var kind: MigrationKind { MigrationKind.declared(in: sql) ?? .breaking }
}

/// What a migration asks of the PushRelay binaries that run on the database after it.
public enum MigrationKind: Sendable, Equatable {
    /// An older binary cannot run on the schema after it (every migration up to 14): it is applied when the first
    /// instance of the build that carries it starts, and binaries that do not know it refuse the database.
    case breaking
    /// An older binary can live with it (a new table, a nullable column, an index, a new function): it is applied
    /// when the first instance of the build that carries it starts, and older instances keep serving.
    case expand
    /// Only binaries that know schema `requires` or later can run after it (a drop, a rename, a tightened rule): it
    /// waits for `pushrelay migrate --finish`, which refuses while an instance older than that is alive. A new
    /// database gets it at once.
    case contract(requires: Int)

    /// The kind declared by a `-- migration: …` line of `sql`, or nil when there is none or it cannot be read.
    static func declared(in sql: String) -> MigrationKind? {
        for line in sql.split(separator: "\n", omittingEmptySubsequences: true) {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("-- migration:") else { continue }
            let words = text.dropFirst("-- migration:".count).split(whereSeparator: { $0 == " " || $0 == "," })
            switch words.first {
            case "expand": return .expand
            case "contract":
                guard words.count == 3, words[1] == "requires", let version = Int(words[2]) else { return nil }
                return .contract(requires: version)
            default: return nil
            }
        }
        return nil
    }

    /// What `schema_migrations.requires` records for a migration `version` of this kind: the schema a binary must
    /// know to run on the database once it is applied (0: it asks nothing of older binaries).
    public func requires(version: Int) -> Int {
        switch self {
        case .breaking: version
        case .expand: 0
        case .contract(let requires): requires
        }
    }
}
