import GRDB

/// A SQLite database file reached with plain SQL beside the engine, as the `sqlite3` shell would reach it: for tests
/// that look at (or break) what is on disk rather than what the storage contract answers. The SQLite counterpart of
/// `PostgresTestDatabase.psql`.
///
/// ```swift
/// let file = SQLiteFile(path: s.dbPath)
/// try await file.strings("SELECT push_token FROM daily_usage")    // the first column of each row, as text
/// try await file.execute("ALTER TABLE daily_usage RENAME TO gone")  // on a connection of its own
/// ```
///
/// Each call opens its own connection (waiting up to 10 s for a lock another connection holds) and closes it.
public struct SQLiteFile: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The first column of each row of `sql`'s answer, as text; NULLs are left out.
    public func strings(_ sql: String) async throws -> [String] {
        try await connection().read { db in try String?.fetchAll(db, sql: sql).compactMap { $0 } }
    }

    /// Runs `sql` (one or more statements) in a transaction.
    public func execute(_ sql: String) async throws {
        try await connection().write { db in try db.execute(sql: sql) }
    }

    private func connection() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        return try DatabaseQueue(path: path, configuration: configuration)
    }
}
