import Foundation
import PushRelayPostgres

/// A fresh, empty PostgreSQL database for one test, on the test process's one throwaway server
/// (`PostgresTestServer`).
///
/// ```swift
/// let pg = try await PostgresTestDatabase.create()   // skips the test without PostgreSQL (fails under CI=true)
/// pg.url                                              // postgres://postgres:…@127.0.0.1:PORT/t_…?sslmode=disable
/// pg.environment                                      // PUSHRELAY_STORAGE_BACKEND=postgres + PUSHRELAY_STORAGE_POSTGRES_URL
/// try pg.configuration()                              // PostgresStorageConfiguration for Storage.postgres(…)
/// try await pg.psql("SELECT count(*) FROM daily_usage")  // runs SQL as the superuser, returns psql -At output
/// ```
///
/// Without PostgreSQL's binaries, `create()` cancels (skips) the calling test with a line saying how to install them,
/// said once on stderr too; under `CI=true` it throws instead.
public struct PostgresTestDatabase: Sendable {
    public let server: PostgresServerProcess
    /// The database's name.
    public let name: String

    /// A database `name` on `server` (which must exist: `create()` makes a new one).
    public init(server: PostgresServerProcess, name: String) {
        self.server = server
        self.name = name
    }

    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/NAME?sslmode=disable`, as `storage.postgres.url` takes it.
    public var url: String { "postgres://\(server.user):\(server.password)@\(server.host):\(server.port)/\(name)?sslmode=disable" }

    /// Environment for a `pushrelay` child process (`ProcessSpawn.environment(pg.environment)`).
    public var environment: [String: String] {
        ["PUSHRELAY_STORAGE_BACKEND": "postgres", "PUSHRELAY_STORAGE_POSTGRES_URL": url]
    }

    /// The configuration `PostgresStorageEngine.open` / `Storage.postgres` take. The pool opens all its connections at
    /// start, and many tests open engines at once on one server: a small pool by default. A request waits up to 30 s
    /// for a connection (the product's default is 5 s): with the whole suite on two cores, opening a pool or a burst of
    /// fifty statements on four connections can take longer, which is not what these tests look at. A test about the
    /// wait sets its own.
    public func configuration(poolSize: Int = 4) throws -> PostgresStorageConfiguration {
        var configuration = try PostgresStorageConfiguration(url: url, poolSize: poolSize, tls: .disable)
        configuration.connectionWait = .seconds(30)
        return configuration
    }

    /// Creates a new, empty database (`t_` and 32 hex digits; no schema: PushRelay migrates it on open).
    public static func create() async throws -> PostgresTestDatabase {
        let server = try await PostgresTestServer.require()
        return try await create(on: server)
    }

    /// Creates a new, empty database on `server` (a server of the test's own).
    public static func create(on server: PostgresServerProcess, name: String? = nil) async throws -> PostgresTestDatabase {
        let name = name ?? "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await PostgresTestServer.psql("CREATE DATABASE \(name)", on: server)
        return PostgresTestDatabase(server: server, name: name)
    }

    /// Runs `sql` on this database as the superuser; returns psql's unaligned, tuples-only output (`-At`).
    @discardableResult
    public func psql(_ sql: String) async throws -> String {
        try await PostgresTestServer.psql(sql, on: server, database: name)
    }

    /// Drops the database, ending its sessions first.
    public func drop() async throws {
        try await PostgresTestServer.psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server)
    }
}
