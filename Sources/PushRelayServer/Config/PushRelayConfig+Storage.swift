import PushRelayPostgres

extension PushRelayConfig {
    static let postgresKeys: Set<String> = ["url", "pool_size", "tls"]

    /// Reads `storage.backend` and `storage.postgres`. With `backend: postgres` the URL is required and parsed here,
    /// so a bad one stops `serve` at start with the key named (and never with the password in the message).
    mutating func readPostgres(_ r: ConfigTreeReader) throws {
        if let v = try r.string("storage.backend") {
            guard let backend = Storage.Backend(rawValue: v) else {
                throw ConfigError(key: "storage.backend", problem: "must be one of sqlite, postgres (got '\(v)')")
            }
            storage.backend = backend
        }
        let section = try r.object("storage.postgres")
        for key in (section ?? [:]).keys.sorted() where !Self.postgresKeys.contains(key) {
            throw ConfigError(key: "storage.postgres.\(key)", problem: "unknown key (known: \(Self.postgresKeys.sorted().joined(separator: ", ")))")
        }
        guard storage.backend == .postgres else { return }
        guard let url = try r.string("storage.postgres.url"), !url.isEmpty else {
            throw ConfigError(
                key: "storage.postgres.url",
                problem: "is required with storage.backend: postgres (postgres://user:password@host:5432/database, or PUSHRELAY_STORAGE_POSTGRES_URL)"
            )
        }
        let poolSize = try r.int("storage.postgres.pool_size", range: 1...1000) ?? 16
        var tls = PostgresStorageConfiguration.TLSMode.prefer
        if let v = try r.string("storage.postgres.tls") {
            guard let mode = PostgresStorageConfiguration.TLSMode(rawValue: v) else {
                throw ConfigError(key: "storage.postgres.tls", problem: "must be one of disable, prefer, require (got '\(v)')")
            }
            tls = mode
        }
        do {
            storage.postgres = try PostgresStorageConfiguration(url: url, poolSize: poolSize, tls: tls)
        } catch {
            throw ConfigError(key: "storage.postgres.url", problem: "\(error)")
        }
    }
}
