import Foundation
import Logging
import PushRelayStore

extension Storage {
    /// Opens the SQLite database at `path` (creating it, except with `.check`) and brings its schema to what `schema`
    /// asks, then returns its `Storage`; `callers` and `logger` as `PushRelayDatabase.init` takes them. With `.check`
    /// and no file at `path`, nothing is created: it throws `StoreError.cannotOpen` saying which commands create the
    /// database. A schema this build cannot run on, or one older than it needs, is a `StorageError`.
    public static func sqlite(
        path: String,
        schema: SchemaStep = .upgrade,
        callers: @escaping WriteCallerExecutor.Lookup = { nil },
        logger: Logger = Logger(label: "pushrelay")
    ) throws -> Storage {
        if schema == .check, !FileManager.default.fileExists(atPath: path) {
            throw StoreError.cannotOpen(
                path: path,
                underlying: "there is no database there yet: 'pushrelay migrate' or 'pushrelay serve' creates it (or set storage.sqlite_path)"
            )
        }
        let database = try PushRelayDatabase(path: path, callers: callers, logger: logger)
        do {
            try database.migrate(step: schema)
        } catch {
            try? database.close()
            throw error
        }
        return .sqlite(database)
    }

    /// The SQLite implementation on an open (and migrated) database.
    public static func sqlite(_ database: PushRelayDatabase) -> Storage {
        let devices = SQLiteDeviceStore(database: database)
        return Storage(
            quota: SQLiteQuotaLedger(database: database),
            deliveries: SQLiteDeliveryLog(database: database),
            admin: SQLiteQuotaAdministration(database: database),
            pushChannel: SQLitePushChannelStore(database: database),
            matrix: SQLiteMatrixStore(database: database),
            devices: devices,
            apiKeys: devices,
            engine: database
        )
    }
}

extension PushRelayDatabase: StorageEngine {
    public func flush() async throws {
        try await batcher.flush()
    }

    public var health: StorageHealth { batcher.faults.current }

    public func probe() async -> StorageHealth {
        do {
            try await batcher.write { db in
                try db.execute(sql: "INSERT INTO storage_probe (at) VALUES (?)", arguments: [ISO8601UTCNow()])
                try db.execute(sql: "DELETE FROM storage_probe")
            }
        } catch {
            // The tracker has seen a storage error already; anything else (the database closed) is not a disk fault.
        }
        return health
    }

    public func statistics() -> [(name: String, help: String, value: Double)] {
        let stats = commitStats
        return [
            ("pushrelay_sqlite_transactions", "Group-committed SQLite transactions since start.", Double(stats.transactions)),
            ("pushrelay_sqlite_writes", "Writes those transactions carried since start.", Double(stats.writes)),
            ("pushrelay_sqlite_wal_syncs", "WAL syncs since start; each answers the writes committed before it.", Double(walSyncs)),
        ]
    }
}
