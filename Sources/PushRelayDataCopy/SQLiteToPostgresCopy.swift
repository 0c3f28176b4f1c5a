import Foundation
// `PushRelayDatabase.pool` is a GRDB `DatabasePool`, read here as it is.
import GRDB
import Logging
import PostgresNIO
import PushRelayCore
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore

/// Copies an existing install's SQLite database into a PostgreSQL database (`pushrelay migrate-data`).
///
/// - The SQLite file must exist and be at this build's schema version (`pushrelay migrate` first); it is opened with
///   `PushRelayDatabase` and only read (no row is written to it).
/// - PostgreSQL is opened with `PostgresStorageEngine.open(schema: .upgrade)`, so a new database gets its schema first.
/// - Everything is copied in one PostgreSQL transaction: all or nothing. The tables are locked against writers, and
///   the copy is refused when any of them already holds a row.
/// - Rows are read from SQLite in primary-key order, in batches, and written with multi-row INSERTs; each value is
///   converted to its PostgreSQL column's type (TEXT, INTEGER, BIGINT). Columns are matched by name: SQLite's
///   bookkeeping columns of the removed write-behind (`daily_usage.folded_log_id`, `delivery_log.pending_usage`) are
///   left behind, PostgreSQL's own columns (`daily_usage.last_decision`, `matrix_retry_queue.claimed_until`) take
///   their defaults; columns and tables about running processes (`channel_messages.owner_instance`, `instances`,
///   `local_push_presence`) are not copied. Any other difference between the two schemas is refused rather than guessed.
/// - The identity sequences (`delivery_log`, `channel_tokens`, `matrix_retry_queue`, `api_keys`) restart past the
///   copied ids, so new rows never collide with them.
public enum SQLiteToPostgresCopy {
    /// How many rows went to one table.
    public struct TableCount: Sendable, Equatable {
        public var table: String
        public var rows: Int
    }

    /// What the copy did.
    public struct Report: Sendable {
        /// One entry per copied table, in copy order.
        public var tables: [TableCount]
        /// Tables left out on request (`--skip-delivery-log`).
        public var skipped: [String]
        public var totalRows: Int { tables.reduce(0) { $0 + $1.rows } }
    }

    /// Why the copy was refused or failed: one line, no password, no row values.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The tables that hold state, in an order that satisfies the foreign keys (`call_devices` → `api_keys`).
    public static let tables: [String] = [
        "token_limits",
        "daily_usage",
        "dead_tokens",
        "delivery_log",
        "api_keys",
        "call_devices",
        "channel_tokens",
        "channel_bindings",
        "channel_messages",
        "matrix_retry_queue",
        "matrix_dedup",
    ]

    /// Tables that hold no state of their own: migration bookkeeping (each engine keeps its own) and the probe.
    public static let bookkeepingTables: Set<String> = ["schema_migrations", "storage_probe"]

    /// Tables about running processes (which instances are alive, which one holds a device's websocket): the SQLite
    /// install is stopped, so none of it holds once copied. The PostgreSQL instances fill them as they start.
    public static let runtimeTables: Set<String> = ["instances", "local_push_presence"]

    /// Columns naming a running process, left NULL in PostgreSQL for the same reason: an unconfirmed channel message
    /// without a live owner is taken over by a live instance.
    static let runtimeColumns: Set<String> = ["channel_messages.owner_instance"]

    /// SQLite columns that PostgreSQL's schema does not have, on purpose (the write-behind fold of migrations 007–009,
    /// folded into `daily_usage` already).
    static let sqliteOnlyColumns: Set<String> = ["daily_usage.folded_log_id", "delivery_log.pending_usage"]

    /// Rows per INSERT, bounded by PostgreSQL's 65,535 bind parameters per statement.
    static func batchSize(columns: Int) -> Int { max(1, min(1000, 60_000 / max(1, columns))) }

    /// Copies `sqlitePath` into the PostgreSQL database `postgres` (migrating its schema first). Throws `Failure`,
    /// `StoreError` or `PostgresStoreError`, each one line.
    public static func run(
        sqlitePath: String,
        postgres: PostgresStorageConfiguration,
        skipDeliveryLog: Bool = false,
        logger: Logger = Logger(label: "pushrelay.migrate-data")
    ) async throws -> Report {
        let database = try openSQLite(sqlitePath)
        do {
            let report = try await copy(from: database, path: sqlitePath, to: postgres, skipDeliveryLog: skipDeliveryLog, logger: logger)
            try? database.close()
            return report
        } catch {
            try? database.close()
            throw error
        }
    }

    // MARK: SQLite side

    /// Opens an existing SQLite database at the current schema version, or refuses with one line.
    static func openSQLite(_ path: String) throws -> PushRelayDatabase {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw Failure("no SQLite database at '\(path)'")
        }
        let database = try PushRelayDatabase(path: path)
        do {
            let applied: [Int]
            do {
                applied = try database.appliedMigrations().map(\.version)
            } catch {
                throw Failure("cannot read '\(path)' as a SQLite database: \(oneLine(error))")
            }
            let expected = PushRelayDatabase.migrations.map(\.version).max() ?? 0
            guard let found = applied.max() else {
                throw Failure("'\(path)' is not a PushRelay database (it has no schema_migrations table)")
            }
            if found > expected {
                throw Failure(
                    "the SQLite database '\(path)' is at schema version \(found), newer than this PushRelay (\(expected)); use the PushRelay that wrote it"
                )
            }
            if found < expected || Set(applied) != Set(PushRelayDatabase.migrations.map(\.version)) {
                throw Failure(
                    "the SQLite database '\(path)' is at schema version \(found), not \(expected): run `pushrelay migrate` on it first (PUSHRELAY_STORAGE_SQLITE_PATH=\(path) pushrelay migrate)"
                )
            }
            let postgresVersion = PostgresStorageEngine.migrations.map(\.version).max() ?? 0
            guard postgresVersion == expected else {
                throw Failure(
                    "this build's SQLite schema (version \(expected)) and PostgreSQL schema (version \(postgresVersion)) differ; cannot copy"
                )
            }
            return database
        } catch {
            try? database.close()
            throw error
        }
    }

    /// A SQLite table's columns in declaration order, and its primary key (in key order).
    struct SQLiteTable: Sendable {
        var columns: [String]
        var primaryKey: [String]
    }

    static func sqliteTables(_ database: PushRelayDatabase) async throws -> [String: SQLiteTable] {
        try await database.pool.read { db in
            let names = try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
            var tables: [String: SQLiteTable] = [:]
            for name in names {
                let info = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [name])
                let columns: [String] = info.map { $0["name"] }
                let primaryKey = info.compactMap { row -> (Int, String)? in
                    let pk: Int = row["pk"]
                    return pk > 0 ? (pk, row["name"]) : nil
                }.sorted { $0.0 < $1.0 }.map(\.1)
                tables[name] = SQLiteTable(columns: columns, primaryKey: primaryKey)
            }
            return tables
        }
    }

    /// Reads up to `limit` rows of `columns` after the key `after` (nil: from the start), in primary-key order.
    static func readBatch(
        _ database: PushRelayDatabase,
        table: String,
        columns: [String],
        key: [String],
        after: [DatabaseValue]?,
        limit: Int
    ) async throws -> [[DatabaseValue]] {
        let list = columns.map(quoted).joined(separator: ", ")
        let keyList = key.map(quoted).joined(separator: ", ")
        var sql = "SELECT \(list) FROM \(quoted(table))"
        var arguments = StatementArguments()
        if let after {
            sql += " WHERE (\(keyList)) > (\(Array(repeating: "?", count: key.count).joined(separator: ", ")))"
            arguments = StatementArguments(after)
        }
        sql += " ORDER BY \(keyList) LIMIT \(limit)"
        let query = sql
        let args = arguments
        let width = columns.count
        return try await database.pool.read { db in
            try Row.fetchAll(db, sql: query, arguments: args).map { row in (0..<width).map { row[$0] as DatabaseValue } }
        }
    }

    // MARK: PostgreSQL side

    /// A PostgreSQL column: its type, and whether a row may leave it out.
    struct PostgresColumn: Sendable {
        enum Kind: Sendable {
            case text
            case int16
            case int32
            case int64
        }

        var name: String
        var kind: Kind?
        var typeName: String
        var mayBeOmitted: Bool
        var isIdentity: Bool
    }

    static func postgresColumns(_ connection: PostgresConnection, logger: Logger) async throws -> [String: [PostgresColumn]] {
        let rows = try await connection.query(
            """
            SELECT table_name::text, column_name::text, data_type::text,
                   (is_nullable = 'YES' OR column_default IS NOT NULL OR is_identity = 'YES'), (is_identity = 'YES')
            FROM information_schema.columns
            WHERE table_schema = current_schema()
            ORDER BY table_name, ordinal_position
            """,
            logger: logger
        ).collect()
        var tables: [String: [PostgresColumn]] = [:]
        for row in rows {
            let (table, name, type, omissible, identity) = try row.decode((String, String, String, Bool, Bool).self)
            let kind: PostgresColumn.Kind? =
                switch type {
                case "text", "character varying", "character": .text
                case "smallint": .int16
                case "integer": .int32
                case "bigint": .int64
                default: nil
                }
            tables[table, default: []].append(
                PostgresColumn(name: name, kind: kind, typeName: type, mayBeOmitted: omissible, isIdentity: identity)
            )
        }
        return tables
    }

    /// How one table is copied: the columns both sides have (in PostgreSQL's order) and SQLite's key for paging.
    struct TablePlan: Sendable {
        var table: String
        var columns: [PostgresColumn]
        var key: [String]
        var identityColumns: [String]
    }

    /// Matches the two schemas table by table; refuses any difference it cannot copy faithfully.
    static func plan(
        sqlite: [String: SQLiteTable],
        postgres: [String: [PostgresColumn]],
        copying: [String]
    ) throws -> [TablePlan] {
        let unknown = Set(sqlite.keys).subtracting(tables).subtracting(bookkeepingTables).subtracting(runtimeTables)
        if !unknown.isEmpty {
            throw Failure("the SQLite database has tables this copy does not know: \(unknown.sorted().joined(separator: ", "))")
        }
        return try copying.map { table in
            guard let source = sqlite[table] else { throw Failure("the SQLite database has no table \(table)") }
            guard let target = postgres[table] else { throw Failure("the PostgreSQL database has no table \(table)") }
            let sourceColumns = Set(source.columns)
            let targetNames = Set(target.map(\.name))
            for column in source.columns where !targetNames.contains(column) && !sqliteOnlyColumns.contains("\(table).\(column)") {
                throw Failure("SQLite column \(table).\(column) has no PostgreSQL counterpart; cannot copy it")
            }
            for column in target where !sourceColumns.contains(column.name) && !column.mayBeOmitted {
                throw Failure("PostgreSQL column \(table).\(column.name) has no SQLite counterpart and no default; cannot fill it")
            }
            for column in target where runtimeColumns.contains("\(table).\(column.name)") && !column.mayBeOmitted {
                throw Failure("PostgreSQL column \(table).\(column.name) must be left empty but is NOT NULL")
            }
            let columns = target.filter { sourceColumns.contains($0.name) && !runtimeColumns.contains("\(table).\($0.name)") }
            for column in columns where column.kind == nil {
                throw Failure("PostgreSQL column \(table).\(column.name) has type \(column.typeName), which this copy cannot convert to")
            }
            let key = source.primaryKey.isEmpty ? ["rowid"] : source.primaryKey
            for k in key where k != "rowid" && !columns.contains(where: { $0.name == k }) {
                throw Failure("the key column \(table).\(k) is not in PostgreSQL's table")
            }
            return TablePlan(table: table, columns: columns, key: key, identityColumns: target.filter(\.isIdentity).map(\.name))
        }
    }

    // MARK: The copy

    static func copy(
        from database: PushRelayDatabase,
        path: String,
        to configuration: PostgresStorageConfiguration,
        skipDeliveryLog: Bool,
        logger: Logger
    ) async throws -> Report {
        let sqlite = try await sqliteTables(database)
        let copying = tables.filter { !(skipDeliveryLog && $0 == "delivery_log") }
        let engine = try await PostgresStorageEngine.open(configuration, schema: .upgrade, logger: logger)
        do {
            // The copy's own refusals come out as they are (the engine would report any other error as an outage);
            // the transaction is rolled back either way.
            let outcome: Result<[TableCount], Failure> = try await engine.perform(write: true, limit: nil) { connection in
                do {
                    return .success(
                        try await connection.withTransaction(logger: logger) { connection in
                            try await copyInTransaction(connection, database: database, sqlite: sqlite, copying: copying, logger: logger)
                        }
                    )
                } catch let e as PostgresTransactionError {
                    if let failure = e.closureError as? Failure { return .failure(failure) }
                    throw e
                }
            }
            try await engine.flushAndClose()
            return Report(tables: try outcome.get(), skipped: skipDeliveryLog ? ["delivery_log"] : [])
        } catch {
            try? await engine.flushAndClose()
            throw error
        }
    }

    static func copyInTransaction(
        _ connection: PostgresConnection,
        database: PushRelayDatabase,
        sqlite: [String: SQLiteTable],
        copying: [String],
        logger: Logger
    ) async throws -> [TableCount] {
        let plans = try plan(sqlite: sqlite, postgres: try await postgresColumns(connection, logger: logger), copying: copying)

        // No writer (a PushRelay already serving from this database, a second copy) gets in until the commit.
        let all = plans.map { quoted($0.table) }.joined(separator: ", ")
        _ = try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(all) IN SHARE ROW EXCLUSIVE MODE"), logger: logger).collect()
        var occupied: [String] = []
        for plan in plans {
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(quoted(plan.table)))"),
                logger: logger
            ).collect()
            if try rows.first?.decode(Bool.self) == true { occupied.append(plan.table) }
        }
        if !occupied.isEmpty {
            throw Failure(
                "the PostgreSQL database is not empty (rows in \(occupied.joined(separator: ", "))); migrate-data copies only into a new, empty database"
            )
        }

        var counts: [TableCount] = []
        for plan in plans {
            let copied = try await copyTable(plan, connection: connection, database: database, logger: logger)
            for column in plan.identityColumns {
                _ = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT setval(pg_get_serial_sequence('\(quoted(plan.table))', '\(column)'),
                                          coalesce((SELECT max(\(quoted(column))) FROM \(quoted(plan.table))), 0) + 1, false)
                            """
                    ),
                    logger: logger
                ).collect()
            }
            counts.append(TableCount(table: plan.table, rows: copied))
        }
        return counts
    }

    static func copyTable(_ plan: TablePlan, connection: PostgresConnection, database: PushRelayDatabase, logger: Logger) async throws -> Int {
        let names = plan.columns.map(\.name)
        // The key columns' positions in the selected row (SQLite's rowid, for a table without a key, is read last).
        let selected = names + (plan.key == ["rowid"] ? ["rowid"] : [])
        let keyIndexes = plan.key.map { k in selected.firstIndex(of: k)! }
        let batch = batchSize(columns: names.count)
        let insertHead = "INSERT INTO \(quoted(plan.table)) (\(names.map(quoted).joined(separator: ", "))) VALUES "
        var after: [DatabaseValue]? = nil
        var copied = 0
        while true {
            let rows = try await readBatch(database, table: plan.table, columns: selected, key: plan.key, after: after, limit: batch)
            if rows.isEmpty { break }
            var binds = PostgresBindings(capacity: rows.count * names.count)
            var tuples: [String] = []
            tuples.reserveCapacity(rows.count)
            var parameter = 0
            for row in rows {
                var placeholders: [String] = []
                placeholders.reserveCapacity(names.count)
                for (index, column) in plan.columns.enumerated() {
                    try bind(row[index], to: column, table: plan.table, into: &binds)
                    parameter += 1
                    placeholders.append("$\(parameter)")
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            _ = try await connection.query(PostgresQuery(unsafeSQL: insertHead + tuples.joined(separator: ", "), binds: binds), logger: logger)
                .collect()
            copied += rows.count
            after = keyIndexes.map { rows[rows.count - 1][$0] }
            if rows.count < batch { break }
        }
        return copied
    }

    /// Appends one SQLite value as its PostgreSQL column's type. Values are never named in errors (push tokens).
    static func bind(_ value: DatabaseValue, to column: PostgresColumn, table: String, into binds: inout PostgresBindings) throws {
        func refuse(_ what: String) -> Failure {
            Failure("a value in \(table).\(column.name) is \(what), not convertible to PostgreSQL's \(column.typeName)")
        }
        if case .null = value.storage {
            binds.appendNull()
            return
        }
        switch column.kind {
        case .text:
            switch value.storage {
            case .string(let s): binds.append(s)
            case .int64(let i): binds.append(String(i))
            case .double(let d): binds.append(String(d))
            case .blob(let data):
                guard let s = String(data: data, encoding: .utf8) else { throw refuse("a blob that is not UTF-8 text") }
                binds.append(s)
            case .null: binds.appendNull()
            }
        case .int16, .int32, .int64:
            let integer: Int64
            switch value.storage {
            case .int64(let i): integer = i
            case .double(let d):
                guard d.rounded() == d, let i = Int64(exactly: d) else { throw refuse("a fraction") }
                integer = i
            case .string(let s):
                guard let i = Int64(s.trimmingCharacters(in: .whitespaces)) else { throw refuse("text") }
                integer = i
            case .blob: throw refuse("a blob")
            case .null:
                binds.appendNull()
                return
            }
            switch column.kind {
            case .int16:
                guard let v = Int16(exactly: integer) else { throw refuse("out of range") }
                binds.append(v)
            case .int32:
                guard let v = Int32(exactly: integer) else { throw refuse("out of range") }
                binds.append(v)
            default:
                binds.append(integer)
            }
        case nil:
            throw refuse("of an unsupported column type")
        }
    }

    static func quoted(_ identifier: String) -> String {
        identifier == "rowid" ? identifier : "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func oneLine(_ error: any Error) -> String {
        "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
