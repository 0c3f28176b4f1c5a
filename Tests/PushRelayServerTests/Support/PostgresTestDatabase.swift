import PushRelayCore
import Foundation
import PushRelayPostgres
import Synchronization
import Testing

/// A fresh, empty PostgreSQL database for one test, on the test process's one throwaway server
/// (`PostgresServerProcess`, started on first use, stopped at exit).
///
/// ```swift
/// let pg = try await PostgresTestDatabase.create()   // skips the test without PostgreSQL (fails under CI=true)
/// defer { Task { try? await pg.drop() } }             // or `await pg.drop()` at the end; the server's exit drops it anyway
/// pg.url                                              // postgres://postgres:…@127.0.0.1:PORT/t_…?sslmode=disable
/// pg.environment                                      // PUSHRELAY_STORAGE_BACKEND=postgres + PUSHRELAY_STORAGE_POSTGRES_URL
/// try pg.configuration()                              // PostgresStorageConfiguration for Storage.postgres(…)
/// try await pg.psql("SELECT count(*) FROM daily_usage")  // runs SQL as the superuser, returns psql -At output
/// ```
///
/// Without PostgreSQL's binaries, `create()` cancels (skips) the calling test with a line saying how to install them,
/// said once on stderr too; under `CI=true` it throws instead.
struct PostgresTestDatabase: Sendable {
    let server: PostgresServerProcess
    /// The database's name (`t_` and 32 hex digits).
    let name: String

    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/NAME?sslmode=disable`, as `storage.postgres.url` takes it.
    var url: String { "postgres://\(server.user):\(server.password)@\(server.host):\(server.port)/\(name)?sslmode=disable" }

    /// Environment for a `pushrelay` child process (`ProcessSpawn.environment(pg.environment)`).
    var environment: [String: String] {
        ["PUSHRELAY_STORAGE_BACKEND": "postgres", "PUSHRELAY_STORAGE_POSTGRES_URL": url]
    }

    /// The configuration `PostgresStorageEngine.open` / `Storage.postgres` take.
    func configuration(poolSize: Int = 8) throws -> PostgresStorageConfiguration {
        try PostgresStorageConfiguration(url: url, poolSize: poolSize, tls: .disable)
    }

    /// Creates a new, empty database (no schema: PushRelay migrates it on open).
    static func create() async throws -> PostgresTestDatabase {
        let server = try await PostgresTestServer.require()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        _ = try await PostgresTestServer.psql("CREATE DATABASE \(name)", on: server, database: "postgres")
        return PostgresTestDatabase(server: server, name: name)
    }

    /// Runs `sql` on this database as the superuser; returns psql's unaligned, tuples-only output (`-At`).
    @discardableResult
    func psql(_ sql: String) async throws -> String {
        try await PostgresTestServer.psql(sql, on: server, database: name)
    }

    /// Drops the database, ending its sessions first.
    func drop() async throws {
        _ = try await PostgresTestServer.psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server, database: "postgres")
    }
}

/// The test process's one PostgreSQL server.
enum PostgresTestServer {
    private static let shared = Locked<Task<PostgresServerProcess, any Error>?>(nil)
    private static let skipSaid = Atomic<Bool>(false)

    /// Whether the binaries are here.
    static var installed: Bool { PostgresServerProcess.binDirectory != nil }

    /// Whether a missing PostgreSQL fails the run instead of skipping (`CI=true`).
    static var required: Bool { ProcessInfo.processInfo.environment["CI"]?.lowercased() == "true" }

    /// For `.enabled(if:)` on suites that need PostgreSQL.
    static var enabled: Bool { installed || required }

    static let skipMessage = "PostgreSQL tests skipped: \(PostgresServerProcess.installHint)"

    /// The running server; skips (or, under CI, fails) the current test when PostgreSQL is not installed.
    static func require() async throws -> PostgresServerProcess {
        if !installed {
            if required {
                throw PostgresServerProcess.Failure(description: "CI=true and PostgreSQL is missing: \(PostgresServerProcess.installHint)")
            }
            // A cancelled test case is not listed by the console output: say it once in the log too.
            if !skipSaid.exchange(true, ordering: .relaxed) { FileHandle.standardError.write(Data("\(skipMessage)\n".utf8)) }
            try Test.cancel(Comment(rawValue: skipMessage))
        }
        let task = shared.withLock { t in
            if let t { return t }
            let started = Task { try await onThread { try PostgresServerProcess.start() } }
            t = started
            return started
        }
        return try await task.value
    }

    /// Runs `sql` with the server's `psql` as the superuser; throws with psql's message when it fails.
    static func psql(_ sql: String, on server: PostgresServerProcess, database: String) async throws -> String {
        let out = try await ProcessSpawn.run(
            [
                server.bin.appendingPathComponent("psql").path, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                "-h", server.host, "-p", "\(server.port)", "-U", server.user, "-d", database, "-c", sql,
            ],
            environment: ProcessSpawn.environment(["PGPASSWORD": server.password, "PGCONNECT_TIMEOUT": "10"])
        )
        guard out.status == 0 else {
            throw PostgresServerProcess.Failure(description: "psql failed (\(out.status)): \(out.stderr.prefix(500))")
        }
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
