import Foundation
import Logging
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// Brings the schema to what a `SchemaStep` asks (`SchemaPlan`): applies `migrations/postgres/*.sql` in order, each in
/// its own transaction, recorded in `schema_migrations` (the same table and versions as SQLite's). A session advisory
/// lock makes instances starting together migrate one at a time.
///
/// The plan's bookkeeping is kept here, outside the numbered migrations, so that adding it asks nothing of older
/// instances: `schema_migrations.requires` (what each migration asks of the binaries after it) and
/// `instances.schema_known` (the schema each live instance knows, which `migrate --finish` reads).
enum PostgresMigrator {
    /// The advisory lock key of migrations ("PRmi").
    static let lockKey = 0x5052_6D69

    /// How recent an instance's heartbeat must be for `migrate --finish` to count it alive (the server beats every
    /// second and the others judge it dead after 3 s).
    static let liveWithinSeconds = 3

    /// Runs `step` of `plan`; returns the names of the migrations applied now. `.check` applies nothing and throws
    /// `StorageError.schemaTooOld` or `.schemaTooNew`; `.finish` throws `StorageError.olderInstancesAlive` when it
    /// would apply a contract migration that a live instance does not know.
    static func migrate(_ connection: PostgresConnection, plan: SchemaPlan, step: SchemaStep, logger: Logger) async throws -> [String] {
        if step == .check {
            let applied = try await appliedRecords(connection, logger: logger)
            if let refusal = plan.refusal(applied, step: .check) { throw refusal }
            return []
        }
        _ = try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger).collect()
        do {
            let done = try await applyPending(connection, plan: plan, step: step, logger: logger)
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger).collect()
            return done
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger).collect()
            throw error
        }
    }

    /// `StorageError.schemaTooNew` when `plan`'s binary can no longer run on the database (nil: it can).
    static func tooNew(_ connection: PostgresConnection, plan: SchemaPlan, logger: Logger) async throws -> StorageError? {
        plan.tooNew(try await appliedRecords(connection, logger: logger))
    }

    private static func applyPending(_ connection: PostgresConnection, plan: SchemaPlan, step: SchemaStep, logger: Logger) async throws -> [String] {
        try await keepBookkeeping(connection, logger: logger)
        let applied = try await appliedRecords(connection, logger: logger)
        if let refusal = plan.refusal(applied, step: step) { throw refusal }
        if step == .finish, let needs = plan.finishNeeds(applied) {
            let older = try await olderLiveInstances(connection, needs: needs, logger: logger)
            if !older.isEmpty { throw StorageError.olderInstancesAlive(needs: needs, instances: older) }
        }
        var done: [String] = []
        for m in plan.pending(applied, step: step) {
            do {
                try await connection.withTransaction(logger: logger) { connection in
                    // The extended query protocol runs one statement: the file runs as the body of one DO block.
                    precondition(!m.sql.contains("$migration$"), "a migration may not contain $migration$")
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "DO $migration$ BEGIN\n\(m.sql)\nEND $migration$"), logger: logger)
                        .collect()
                    let version = m.version
                    let name = m.name
                    let stamp = ISO8601UTC.string(Date())
                    let requires = m.kind.requires(version: m.version)
                    _ = try await connection.query(
                        "INSERT INTO schema_migrations (version, name, applied_at, requires) VALUES (\(version), \(name), \(stamp), \(requires))",
                        logger: logger
                    ).collect()
                }
            } catch {
                throw StorageError.migrationFailed(name: m.name, underlying: "\(PostgresErrorMapping.map(error, target: "PostgreSQL"))")
            }
            done.append(m.name)
        }
        // A new database got `instances` from a numbered migration just now.
        if !done.isEmpty { try await keepBookkeeping(connection, logger: logger) }
        return done
    }

    /// Creates `schema_migrations` and the plan's columns where they are missing (see the type's comment).
    private static func keepBookkeeping(_ connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    INTEGER PRIMARY KEY,
                name       TEXT NOT NULL,
                applied_at TEXT NOT NULL,
                requires   INTEGER
            )
            """,
            logger: logger
        ).collect()
        _ = try await connection.query("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS requires INTEGER", logger: logger).collect()
        if try await exists(connection, "instances", logger: logger) {
            _ = try await connection.query("ALTER TABLE instances ADD COLUMN IF NOT EXISTS schema_known INTEGER", logger: logger).collect()
        }
    }

    /// The live instances (heartbeat within `liveWithinSeconds`) that know a schema older than `needs`, with the
    /// schema each knows (nil: a PushRelay that does not record it, which is older than any that has contract
    /// migrations).
    private static func olderLiveInstances(_ connection: PostgresConnection, needs: Int, logger: Logger) async throws -> [String: Int?] {
        guard try await exists(connection, "instances", logger: logger) else { return [:] }
        let rows = try await connection.query(
            """
            SELECT id, schema_known FROM instances
            WHERE heartbeat_at > now() - make_interval(secs => \(liveWithinSeconds)) AND (schema_known IS NULL OR schema_known < \(needs))
            """,
            logger: logger
        ).collect()
        var older: [String: Int?] = [:]
        for row in rows {
            let (id, known) = try row.decode((String, Int?).self)
            older[id] = known
        }
        return older
    }

    /// The rows of `schema_migrations` (none when there is no such table).
    static func appliedRecords(_ connection: PostgresConnection, logger: Logger) async throws -> [AppliedMigration] {
        guard try await exists(connection, "schema_migrations", logger: logger) else { return [] }
        let hasRequires =
            try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('schema_migrations') AND attname = 'requires' AND NOT attisdropped)",
                logger: logger
            ).collect().first?.decode(Bool.self) == true
        let query: PostgresQuery =
            hasRequires ? "SELECT version, requires FROM schema_migrations" : "SELECT version, NULL::integer FROM schema_migrations"
        return try await connection.query(query, logger: logger).collect().map {
            let (version, requires) = try $0.decode((Int, Int?).self)
            return AppliedMigration(version: version, requires: requires)
        }
    }

    private static func exists(_ connection: PostgresConnection, _ table: String, logger: Logger) async throws -> Bool {
        // `table` is one of this file's constants.
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT to_regclass('\(table)') IS NOT NULL"), logger: logger).collect()
        return try rows.first?.decode(Bool.self) == true
    }
}
