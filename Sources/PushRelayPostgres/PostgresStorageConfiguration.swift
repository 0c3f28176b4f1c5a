import Foundation

/// Where and how to reach PostgreSQL: `storage.postgres` in the config.
public struct PostgresStorageConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// `storage.postgres.tls`.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, plain TCP otherwise.
        case prefer
        /// TLS, with the server's certificate verified; no connection without it.
        case require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// Connections this instance keeps at most (`storage.postgres.pool_size`).
    public var poolSize: Int
    public var tls: TLSMode
    /// How long a request waits for a connection before it fails as storage unavailable (PostgreSQL down or
    /// unreachable). The pool keeps reconnecting in the background.
    public var connectionWait: Duration
    /// How long opening waits for the first connection.
    public var connectTimeout: Duration
    /// How often a running instance checks that the schema is still one it knows: once another instance has migrated
    /// it to a newer version, this one refuses every request (503) and says why, instead of serving on a schema it
    /// does not know.
    public var schemaCheckInterval: Duration = .seconds(30)

    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String?,
        database: String,
        poolSize: Int = 16,
        tls: TLSMode = .prefer,
        connectionWait: Duration = .seconds(5),
        connectTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.poolSize = poolSize
        self.tls = tls
        self.connectionWait = connectionWait
        self.connectTimeout = connectTimeout
    }

    /// Parses `postgres://user:password@host:port/database` (or `postgresql://`); user and password may be
    /// percent-encoded. The port defaults to 5432 and the database to the user name. A `sslmode` query item
    /// (`disable`, `prefer`, `require`) sets `tls`, otherwise the `tls` argument does.
    public init(url: String, poolSize: Int = 16, tls: TLSMode = .prefer) throws(PostgresStoreError) {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased() else {
            throw .invalidURL("not a URL; expected postgres://user:password@host:5432/database")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw .invalidURL("the scheme is '\(scheme)'; expected postgres://user:password@host:5432/database")
        }
        guard let host = c.host, !host.isEmpty else { throw .invalidURL("it names no host") }
        guard let user = c.user?.removingPercentEncoding, !user.isEmpty else { throw .invalidURL("it names no user") }
        let port = c.port ?? 5432
        guard (1...65535).contains(port) else { throw .invalidURL("port \(port) is out of range") }
        let path = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        guard !path.contains("/") else { throw .invalidURL("the path must be just the database name") }
        var mode = tls
        for item in c.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let m = TLSMode(rawValue: value) else {
                    throw .invalidURL("sslmode must be one of disable, prefer, require")
                }
                mode = m
            default:
                throw .invalidURL("unknown parameter '\(item.name)'")
            }
        }
        guard poolSize >= 1 else { throw .invalidURL("pool_size must be at least 1") }
        self.init(
            host: host,
            port: port,
            username: user,
            password: c.password?.removingPercentEncoding,
            database: path.isEmpty ? user : (path.removingPercentEncoding ?? path),
            poolSize: poolSize,
            tls: mode
        )
    }

    /// The URL without its password, for logs and errors.
    public var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database) (tls \(tls.rawValue), pool \(poolSize))"
    }
}
