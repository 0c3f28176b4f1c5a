import Foundation
import Logging
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// Applies `migrations/postgres/*.sql` in order, each in its own transaction, recorded in `schema_migrations` (the
/// same table and versions as SQLite's). A session advisory lock makes instances starting together migrate one at a
/// time. A schema newer than this build is refused (`StorageError.schemaTooNew`).
enum PostgresMigrator {
    /// The advisory lock key of migrations ("PRmi").
    static let lockKey = 0x5052_6D69

    static func migrate(_ connection: PostgresConnection, migrations: [Migration], logger: Logger) async throws -> [String] {
        _ = try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger).collect()
        do {
            let done = try await applyPending(connection, migrations: migrations, logger: logger)
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger).collect()
            return done
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger).collect()
            throw error
        }
    }

    /// The newest schema version applied, if it is newer than any of `migrations` (nil: a schema this build knows).
    static func unknownVersion(_ connection: PostgresConnection, migrations: [Migration], logger: Logger) async throws -> Int? {
        let known = migrations.map(\.version).max() ?? 0
        guard let newest = try await appliedVersions(connection, logger: logger).max(), newest > known else { return nil }
        return newest
    }

    /// Throws `StorageError.schemaTooNew` if the database has a migration this build does not know.
    static func checkVersion(_ connection: PostgresConnection, migrations: [Migration], logger: Logger) async throws {
        let applied = try await appliedVersions(connection, logger: logger)
        let known = migrations.map(\.version).max() ?? 0
        if let newest = applied.max(), newest > known { throw StorageError.schemaTooNew(found: newest, known: known) }
    }

    private static func applyPending(_ connection: PostgresConnection, migrations: [Migration], logger: Logger) async throws -> [String] {
        _ = try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    INTEGER PRIMARY KEY,
                name       TEXT NOT NULL,
                applied_at TEXT NOT NULL
            )
            """,
            logger: logger
        ).collect()
        let applied = Set(try await appliedVersions(connection, logger: logger))
        let known = migrations.map(\.version).max() ?? 0
        if let newest = applied.max(), newest > known { throw StorageError.schemaTooNew(found: newest, known: known) }
        var done: [String] = []
        for m in migrations.sorted(by: { $0.version < $1.version }) where !applied.contains(m.version) {
            do {
                try await connection.withTransaction(logger: logger) { connection in
                    // The extended query protocol runs one statement: the file runs as the body of one DO block.
                    precondition(!m.sql.contains("$migration$"), "a migration may not contain $migration$")
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "DO $migration$ BEGIN\n\(m.sql)\nEND $migration$"), logger: logger)
                        .collect()
                    let version = m.version
                    let name = m.name
                    let stamp = ISO8601UTC.string(Date())
                    _ = try await connection.query(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(version), \(name), \(stamp))",
                        logger: logger
                    ).collect()
                }
            } catch {
                throw StorageError.migrationFailed(name: m.name, underlying: "\(PostgresErrorMapping.map(error, target: "PostgreSQL"))")
            }
            done.append(m.name)
        }
        return done
    }

    private static func appliedVersions(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger).collect()
        guard try exists.first?.decode(Bool.self) == true else { return [] }
        return try await connection.query("SELECT version FROM schema_migrations", logger: logger).collect().map { try $0.decode(Int.self) }
    }
}
