extension Storage {
    /// The SQLite implementation on an open (and migrated) database.
    public static func sqlite(_ database: PushRelayDatabase) -> Storage {
        let devices = SQLiteDeviceStore(database: database)
        return Storage(
            quota: SQLiteQuotaLedger(database: database),
            deliveries: SQLiteDeliveryLog(database: database),
            admin: SQLiteQuotaAdministration(database: database),
            localPush: SQLiteLocalPushStore(database: database),
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

    public func statistics() -> [(name: String, help: String, value: Double)] {
        let stats = commitStats
        return [
            ("pushrelay_sqlite_transactions", "Group-committed SQLite transactions since start.", Double(stats.transactions)),
            ("pushrelay_sqlite_writes", "Writes those transactions carried since start.", Double(stats.writes)),
            ("pushrelay_sqlite_wal_syncs", "WAL syncs since start; each answers the writes committed before it.", Double(walSyncs)),
        ]
    }
}
