import Foundation

extension PushRelayConfig {
    /// `storage:`: which engine holds the data, and where. The server reads the settings; the binary turns them into
    /// an engine (and parses PostgreSQL's URL, whose grammar is the engine's).
    public struct Storage: Sendable {
        public init() {}
        /// `storage.backend`: which engine holds the data.
        public var backend = Backend.sqlite
        /// `storage.sqlite_path` (SQLite only).
        public var sqlitePath = "./pushrelay.sqlite"
        /// `storage.postgres.*` (PostgreSQL only): read when `backend` is `postgres`.
        public var postgres: Postgres?

        public enum Backend: String, Sendable, CaseIterable {
            /// One file, one process: the embedded default.
            case sqlite
            /// A PostgreSQL database that several instances share.
            case postgres
        }

        /// `storage.postgres.*`, as written: the URL is parsed by whoever opens the storage, which reports a bad one in
        /// one line naming `storage.postgres.url`, without its password.
        public struct Postgres: Sendable, Equatable {
            /// `storage.postgres.tls`.
            public enum TLS: String, Sendable, CaseIterable {
                /// Plain TCP.
                case disable
                /// TLS when the server offers it, plain TCP otherwise.
                case prefer
                /// TLS, with the server's certificate verified; no connection without it.
                case require
            }

            /// `storage.postgres.url`: `postgres://user:password@host:5432/database`. It holds the password: never
            /// log it; `redactedURL` is what may be shown.
            public var url: String
            /// `storage.postgres.pool_size`: connections this instance keeps at most.
            public var poolSize: Int
            /// `storage.postgres.tls` (an `sslmode` in the URL wins).
            public var tls: TLS

            public init(url: String, poolSize: Int = 16, tls: TLS = .prefer) {
                self.url = url
                self.poolSize = poolSize
                self.tls = tls
            }

            /// The URL's scheme, user, host, port and database, with `***` for a password and without its query:
            /// what logs and checks may show. A URL whose host cannot be read shows as unreadable.
            public var redactedURL: String {
                guard let c = URLComponents(string: url), let scheme = c.scheme, let host = c.percentEncodedHost, !host.isEmpty else {
                    return "(storage.postgres.url unreadable)"
                }
                var out = "\(scheme)://"
                if let user = c.percentEncodedUser { out += user + (c.percentEncodedPassword == nil ? "" : ":***") + "@" }
                out += host
                if let port = c.port { out += ":\(port)" }
                return out + c.percentEncodedPath
            }
        }

        /// Where the data is, for logs and checks: the SQLite path, or PostgreSQL's address without credentials.
        public var location: String {
            switch backend {
            case .sqlite: "SQLite \(sqlitePath)"
            case .postgres: postgres.map { "PostgreSQL \($0.redactedURL)" } ?? "PostgreSQL (not configured)"
            }
        }
    }

    /// `postgres` is a nested section.
    static let storageKeys: [ConfigKey] = ["backend", "sqlite_path", "postgres.url", "postgres.pool_size", "postgres.tls"]
}

extension PushRelayConfig.Storage {
    /// Reads `storage.*` over the defaults. With `backend: postgres` the URL is required (its grammar is checked where
    /// the storage is opened).
    package init(reading r: ConfigTreeReader) throws {
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
        let keys = PushRelayConfig.storageKeys.names(in: "postgres")
        let section = try r.object("storage.postgres")
        for key in (section ?? [:]).keys.sorted() where !keys.contains(key) {
            throw ConfigError(key: "storage.postgres.\(key)", problem: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
        }
        guard backend == .postgres else { return }
        postgres = try Self.postgres(reading: r)
    }

    /// `storage.postgres.*` when the backend is PostgreSQL: the URL (required), the pool size and the TLS mode.
    private static func postgres(reading r: ConfigTreeReader) throws -> Postgres {
        guard let url = try r.string("storage.postgres.url"), !url.isEmpty else {
            throw ConfigError(
                key: "storage.postgres.url",
                problem: "is required with storage.backend: postgres (postgres://user:password@host:5432/database, or PUSHRELAY_STORAGE_POSTGRES_URL)"
            )
        }
        let poolSize = try r.int("storage.postgres.pool_size", range: 1...1000) ?? 16
        var tls = Postgres.TLS.prefer
        if let v = try r.string("storage.postgres.tls") {
            guard let mode = Postgres.TLS(rawValue: v) else {
                throw ConfigError(key: "storage.postgres.tls", problem: "must be one of disable, prefer, require (got '\(v)')")
            }
            tls = mode
        }
        return Postgres(url: url, poolSize: poolSize, tls: tls)
    }
}
