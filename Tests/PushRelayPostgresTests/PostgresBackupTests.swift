import Foundation
import PushRelayCore
import PushRelayPostgres
import PushRelayStore
import PushRelayTestHarness
import Testing

/// Backup and restore of a PostgreSQL database as `docs/operations.md` writes them out: `pg_dump --format=custom` while
/// PushRelay runs, `pg_restore --no-owner` into a new, empty database, and PushRelay on the restored copy goes on
/// counting where the original stood.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresBackupTests {
    let day = UTCDay(string: "2026-11-21")!

    @Test func aDumpRestoredIntoANewDatabaseCarriesOnWhereTheOriginalStood() async throws {
        let original = try await PostgresTestDatabase.create()
        let storage = try await Storage.postgres(try original.configuration(), logger: PostgresTestServer.logger)
        let policy = QuotaPolicy(dailyLimit: 3)
        for _ in 0..<2 {
            _ = try await storage.quota.reserve(pushToken: "backup-token", appID: "io.app", day: day, policy: policy, now: day.start)
        }
        let (channelToken, _) = try await storage.pushChannel.createToken(webhookID: "hook-backup", label: "phone", now: day.start)

        // The dump is taken while the storage is open (pg_dump reads one consistent snapshot).
        let dump = URL(fileURLWithPath: TempPath.make()).deletingLastPathComponent().appendingPathComponent("pushrelay.dump").path
        let server = original.server
        let environment = ProcessSpawn.environment(["PGPASSWORD": server.password, "PGCONNECT_TIMEOUT": "10"])
        let connection = ["-h", server.host, "-p", "\(server.port)", "-U", server.user]
        let dumped = try await ProcessSpawn.run(
            [server.bin.appendingPathComponent("pg_dump").path, "--format=custom", "--file=\(dump)"] + connection + [original.name],
            environment: environment
        )
        #expect(dumped.status == 0, "\(dumped.stderr)")
        try await storage.engine.flushAndClose()

        let restored = try await PostgresTestDatabase.create(on: server)
        let loaded = try await ProcessSpawn.run(
            [server.bin.appendingPathComponent("pg_restore").path, "--no-owner", "--exit-on-error", "--dbname=\(restored.name)"] + connection + [
                dump
            ],
            environment: environment
        )
        #expect(loaded.status == 0, "\(loaded.stderr)")

        let copy = try await Storage.postgres(try restored.configuration(), logger: PostgresTestServer.logger)
        let limits = try await copy.quota.rateLimits(pushToken: "backup-token", appID: "io.app", day: day, policy: policy)
        #expect(limits.attempts == 2 && limits.successful == 2 && limits.remaining == 1, "\(limits)")
        let third = try await copy.quota.reserve(pushToken: "backup-token", appID: "io.app", day: day, policy: policy, now: day.start)
        #expect(third.decision.allowed && third.decision.counters.attempts == 3)
        let fourth = try await copy.quota.reserve(pushToken: "backup-token", appID: "io.app", day: day, policy: policy, now: day.start)
        #expect(!fourth.decision.allowed, "the restored copy keeps the day's count")
        #expect(try await copy.pushChannel.webhookID(forChannelToken: channelToken) == "hook-backup", "channel tokens come back too")
        try await copy.engine.flushAndClose()
        try? await original.drop()
        try? await restored.drop()
    }
}
