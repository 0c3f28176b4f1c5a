import Foundation
import GRDB
import Logging
import PushRelayCore
import PushRelayStore

/// Creates an empty file at `path` with exactly `mode` (the umask can only take bits away from the mode `open` asks
/// for; `fchmod` sets it whole). Returns 0, or the `errno` of the step that failed: `EEXIST` when `path` exists. A
/// file created whose mode could not be set is left in place.
func createExclusiveFile(atPath path: String, mode: mode_t) -> Int32 {
    let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode)
    guard fd >= 0 else { return errno }
    let result = fchmod(fd, mode) == 0 ? 0 : errno
    close(fd)
    return result
}

/// The SQLite database (WAL) behind quotas, overrides and the delivery log.
public final class PushRelayDatabase: Sendable {
    public let pool: DatabasePool
    public let path: String
    /// Group commit for every write on the request path.
    let batcher: WriteBatcher
    /// The writer connection's cache of quota rows (used inside the batcher's transactions).
    let usageCache: SQLiteUsageCache

    /// Group-commit statistics: write transactions committed, and the writes they carried.
    public var commitStats: (transactions: Int, writes: Int) {
        let s = batcher.stats
        return (s.batches, s.jobs)
    }

    /// Syncs of the WAL by the group commit so far (each answers the writes committed before it).
    public var walSyncs: Int { batcher.syncs }

    /// What the WAL file is truncated to when it starts over after a checkpoint (`PRAGMA journal_size_limit`).
    public static let walSizeLimitBytes = 64 << 20

    /// The migrations this build carries (generated from `migrations/*.sql`).
    public static var migrations: [Migration] { EmbeddedMigrations.all }

    /// Opens (creating if needed) the database. Does not migrate: call `migrate()`. `callers` says where a caller
    /// whose write committed is resumed (the server passes its event loops; by default, on the syncing thread).
    ///
    /// The database holds full push tokens and webhook ids, so its files are the owner's alone: a new database is
    /// created mode 0600 whatever the umask (SQLite gives its `-wal`, `-shm` and `-journal` the database file's mode),
    /// and an existing one that others may read is made 0600 with its companions (`restrictFileModes`); when that
    /// fails (a file of another user) the database is opened as it is and `logger` gets a warning.
    public init(
        path: String,
        callers: @escaping WriteCallerExecutor.Lookup = { nil },
        logger: Logger = Logger(label: "pushrelay")
    ) throws {
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.label = "pushrelay"
        config.prepareDatabase { db in
            // Checkpoints run on their own connection and thread (WALCheckpointer), not inside a commit where they
            // stalled every request of the batch. The automatic one stays as a backstop at ~40 MB of WAL.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(WALCheckpointer.backstopPages)")
            // A WAL that grew (a burst of writes while a reader held an old snapshot) is cut back to this size each
            // time a checkpoint lets it start over, instead of keeping its largest size on disk.
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimitBytes)")
        }
        do {
            let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
            for warning in Self.restrictFileModes(path: path) { logger.warning("\(warning)") }
            pool = try DatabasePool(path: path, configuration: config)
            // NORMAL: a commit writes the WAL without syncing it. The group commit (WriteBatcher) syncs the WAL itself,
            // on a thread of its own, and answers a transaction's callers only after that sync: every answered write
            // is on disk, as with FULL, but the writer runs the next batch while the disk flushes. (GRDB sets NORMAL
            // when it switches the writer to WAL; it is stated here because the durability argument depends on it.)
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        } catch {
            throw StoreError.cannotOpen(path: path, underlying: "\(error)")
        }
        self.path = path
        let usageCache = SQLiteUsageCache()
        self.usageCache = usageCache
        self.batcher = WriteBatcher(
            pool: pool,
            checkpointer: WALCheckpointer(path: path),
            callers: callers,
            began: { db in try usageCache.validate(db) },
            rolledBack: { usageCache.resync() }
        )
    }

    /// The mode of every file of the database: read and write for the owner only.
    public static let fileMode: mode_t = 0o600

    /// The files SQLite keeps beside the database at `path`.
    static func companionPaths(of path: String) -> [String] { ["-wal", "-shm", "-journal"].map { path + $0 } }

    /// Creates the database file at `path` with `fileMode` when there is none, and takes group and other access away
    /// from an existing one and its companions (`-wal`, `-shm`, `-journal`). Returns a sentence for each file whose
    /// mode could not be set; the files are then left as they are.
    static func restrictFileModes(path: String) -> [String] {
        var warnings: [String] = []
        let created = createExclusiveFile(atPath: path, mode: fileMode)
        if created != 0, created != EEXIST, created != ENOENT {
            warnings.append("could not create \(path) with mode 0600: \(String(cString: strerror(created)))")
        }
        for file in [path] + companionPaths(of: path) {
            var info = stat()
            guard stat(file, &info) == 0, info.st_mode & 0o077 != 0 else { continue }
            if chmod(file, fileMode) != 0 {
                let reason = String(cString: strerror(errno))
                let mode = String(info.st_mode & 0o777, radix: 8)
                warnings.append("\(file) is mode \(mode), readable by other users, and could not be made 0600: \(reason)")
            }
        }
        return warnings
    }

    /// Brings the schema to what `step` asks of the migrations this build carries (`SchemaPlan`): applies the pending
    /// ones in order, each in its own transaction, recording them in `schema_migrations`, and returns their names.
    /// `.check` applies nothing and throws `StorageError.schemaTooOld` or `.schemaTooNew` when this build cannot run on
    /// the database as it is. (One SQLite database has one instance: `.finish` does not look for older ones.)
    @discardableResult
    public func migrate(_ migrations: [Migration] = PushRelayDatabase.migrations, step: SchemaStep = .upgrade) throws -> [String] {
        let plan = SchemaPlan(carried: migrations)
        if step == .check {
            let applied = try pool.read { db in try Self.appliedRecords(db) }
            if let refusal = plan.refusal(applied, step: .check) { throw refusal }
            return []
        }
        return try pool.barrierWriteWithoutTransaction { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version    INTEGER PRIMARY KEY,
                        name       TEXT NOT NULL,
                        applied_at TEXT NOT NULL,
                        requires   INTEGER
                    )
                    """
            )
            // Tables made before PushRelay recorded what each migration requires: their rows count as their version.
            if try !db.columns(in: "schema_migrations").contains(where: { $0.name == "requires" }) {
                try db.execute(sql: "ALTER TABLE schema_migrations ADD COLUMN requires INTEGER")
            }
            let applied = try Self.appliedRecords(db)
            if let refusal = plan.refusal(applied, step: step) { throw refusal }
            var done: [String] = []
            for m in plan.pending(applied, step: step) {
                do {
                    try db.inTransaction {
                        try db.execute(sql: m.sql)
                        try db.execute(
                            sql: "INSERT INTO schema_migrations (version, name, applied_at, requires) VALUES (?, ?, ?, ?)",
                            arguments: [m.version, m.name, ISO8601UTCNow(), m.kind.requires(version: m.version)]
                        )
                        return .commit
                    }
                } catch {
                    throw StorageError.migrationFailed(name: m.name, underlying: "\(error)")
                }
                done.append(m.name)
            }
            return done
        }
    }

    /// The rows of `schema_migrations` (none when there is no such table).
    static func appliedRecords(_ db: Database) throws -> [AppliedMigration] {
        guard try db.tableExists("schema_migrations") else { return [] }
        let hasRequires = try db.columns(in: "schema_migrations").contains { $0.name == "requires" }
        let sql = hasRequires ? "SELECT version, requires FROM schema_migrations" : "SELECT version, NULL FROM schema_migrations"
        return try Row.fetchAll(db, sql: sql).map { AppliedMigration(version: $0[0], requires: $0[1]) }
    }

    /// The versions recorded in `schema_migrations`.
    public func appliedMigrations() throws -> [(version: Int, name: String, appliedAt: String)] {
        try pool.read { db in
            guard try db.tableExists("schema_migrations") else { return [] }
            return try Row.fetchAll(db, sql: "SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
                .map { (version: $0[0], name: $0[1], appliedAt: $0[2]) }
        }
    }

    /// Commits queued writes, then checkpoints and closes. Call once, after the last request finished.
    public func flushAndClose() async throws {
        try? await batcher.flush()
        // Closing blocks until every reader is returned to the pool, and returning one can need a Swift task to
        // run. The server may run tasks on its I/O threads, so block a Dispatch thread instead of one of those.
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                c.resume(with: Result { try self.close() })
            }
        }
    }

    /// Checkpoints the WAL and closes the pool. Call once, after the last request finished.
    public func close() throws {
        batcher.stop()
        try? pool.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
        }
        try pool.close()
    }
}

func ISO8601UTCNow() -> String {
    ISO8601UTC.string(Date())
}
