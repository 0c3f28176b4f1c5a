import PushRelayCore
import Foundation
import Logging
import PostgresNIO
import PushRelayPostgres
import Synchronization
import Testing

/// The test process's one PostgreSQL server (started on first use, stopped at exit) and a fresh database per test.
///
/// Without PostgreSQL's binaries, `require()` skips the calling test with the line saying how to install them; under
/// `CI=true` it fails instead.
enum PostgresServer {
    private static let shared = Locked<Task<PostgresServerProcess, any Error>?>(nil)
    private static let skipSaid = Atomic<Bool>(false)

    /// Whether the binaries are here.
    static var installed: Bool { PostgresServerProcess.binDirectory != nil }

    /// Whether a missing PostgreSQL fails the run instead of skipping (`CI=true`).
    static var required: Bool { ProcessInfo.processInfo.environment["CI"]?.lowercased() == "true" }

    /// For `.enabled(if:)` on suites of PostgreSQL's own tests.
    static var enabled: Bool { installed || required }

    /// For the storage under test: warnings only (the pool logs every failed reconnection at info).
    static let logger: Logger = {
        var l = Logger(label: "pushrelay.tests.postgres")
        l.logLevel = .warning
        return l
    }()

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

    /// A new, empty database on the shared server, as PushRelay's configuration names it.
    static func freshDatabase(poolSize: Int = 8) async throws -> PostgresStorageConfiguration {
        let server = try await require()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await execute("CREATE DATABASE \(name)", on: server)
        return configuration(server, database: name, poolSize: poolSize)
    }

    static func configuration(_ server: PostgresServerProcess, database: String, poolSize: Int = 8) -> PostgresStorageConfiguration {
        PostgresStorageConfiguration(
            host: server.host,
            port: server.port,
            username: server.user,
            password: server.password,
            database: database,
            poolSize: poolSize,
            tls: .disable
        )
    }

    /// Runs one statement as the superuser on `database` (default: the `postgres` maintenance database).
    static func execute(_ sql: String, on server: PostgresServerProcess, database: String = "postgres") async throws {
        let connection = try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: server.host,
                port: server.port,
                username: server.user,
                password: server.password,
                database: database,
                tls: .disable
            ),
            id: 1,
            logger: Logger(label: "pushrelay.tests.postgres")
        )
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "pushrelay.tests.postgres")).collect()
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
