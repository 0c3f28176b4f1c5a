import PushRelayPostgres

extension PushRelayConfig {
    /// `storage:`: which engine holds the data, and where.
    public struct Storage: Sendable {
        public init() {}
        /// `storage.backend`: which engine holds the data.
        public var backend = Backend.sqlite
        /// `storage.sqlite_path` (SQLite only).
        public var sqlitePath = "./pushrelay.sqlite"
        /// `storage.postgres.*` (PostgreSQL only): validated when `backend` is `postgres`.
        public var postgres: PostgresStorageConfiguration?

        public enum Backend: String, Sendable, CaseIterable {
            /// One file, one process: the embedded default.
            case sqlite
            /// A PostgreSQL database that several instances share.
            case postgres
        }

        /// Where the data is, for logs and `check-config`: the SQLite path, or PostgreSQL's address without credentials.
        public var location: String {
            switch backend {
            case .sqlite: "SQLite \(sqlitePath)"
            case .postgres: postgres.map { "PostgreSQL \($0)" } ?? "PostgreSQL (not configured)"
            }
        }
    }

    static let storageKeys: Set<String> = ["backend", "sqlite_path", "postgres"]
    static let postgresKeys: Set<String> = ["url", "pool_size", "tls"]
}

extension PushRelayConfig.Storage {
    /// Reads `storage.*` over the defaults. With `backend: postgres` the URL is required and parsed here, so a bad one
    /// stops `serve` (and `check-config`) at start with the key named, and never with the password in the message.
    init(reading r: ConfigTreeReader) throws {
        self.init()
        if let v = try r.string("storage.sqlite_path") {
            guard !v.isEmpty else { throw ConfigError(key: "storage.sqlite_path", problem: "must not be empty") }
            sqlitePath = v
        }
        if let v = try r.string("storage.backend") {
            guard let backend = Backend(rawValue: v) else {
                throw ConfigError(key: "storage.backend", problem: "must be one of sqlite, postgres (got '\(v)')")
            }
            self.backend = backend
        }
        let keys = PushRelayConfig.postgresKeys
        let section = try r.object("storage.postgres")
        for key in (section ?? [:]).keys.sorted() where !keys.contains(key) {
            throw ConfigError(key: "storage.postgres.\(key)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
        }
        guard backend == .postgres else { return }
        postgres = try Self.postgres(reading: r)
    }

    /// `storage.postgres.*` when the backend is PostgreSQL: the URL (required), the pool size and the TLS mode.
    ///
    /// The URL's grammar is the engine's (`PostgresStorageConfiguration(url:)`, which `migrate-data --to` also
    /// parses with), so its problems read the same wherever a URL is given.
    private static func postgres(reading r: ConfigTreeReader) throws -> PostgresStorageConfiguration {
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
            return try PostgresStorageConfiguration(url: url, poolSize: poolSize, tls: tls)
        } catch {
            throw ConfigError(key: "storage.postgres.url", problem: "\(error)")
        }
    }
}
