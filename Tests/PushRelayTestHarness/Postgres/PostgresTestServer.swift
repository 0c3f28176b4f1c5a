import Foundation
import Logging
import PushRelayCore
import Synchronization
import Testing

/// The test process's one PostgreSQL server (`PostgresServerProcess`, started on first use, stopped at exit), shared
/// by every test target's suites.
///
/// Without PostgreSQL's binaries, `require()` skips the calling test with the line saying how to install them; under
/// `CI=true` it fails instead.
public enum PostgresTestServer {
    private static let shared = Locked<Task<PostgresServerProcess, any Error>?>(nil)
    private static let skipSaid = Atomic<Bool>(false)

    /// Whether the binaries are here.
    public static var installed: Bool { PostgresServerProcess.binDirectory != nil }

    /// Whether a missing PostgreSQL fails the run instead of skipping (`CI=true`).
    public static var required: Bool { ProcessInfo.processInfo.environment["CI"]?.lowercased() == "true" }

    /// For `.enabled(if:)` on suites that need PostgreSQL.
    public static var enabled: Bool { installed || required }

    public static let skipMessage = "PostgreSQL tests skipped: \(PostgresServerProcess.installHint)"

    /// For storage opened by the tests: warnings only (the pool logs every failed reconnection at info).
    public static let logger: Logger = {
        var l = Logger(label: "pushrelay.tests.postgres")
        l.logLevel = .warning
        return l
    }()

    /// The running server; skips (or, under CI, fails) the current test when PostgreSQL is not installed.
    public static func require() async throws -> PostgresServerProcess {
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

    /// Runs `sql` with the server's `psql` as the superuser; throws with psql's message when it fails. Returns psql's
    /// unaligned, tuples-only output (`-At`).
    @discardableResult
    public static func psql(_ sql: String, on server: PostgresServerProcess, database: String = "postgres") async throws -> String {
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
