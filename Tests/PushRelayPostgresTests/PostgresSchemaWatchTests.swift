import Foundation
import PushRelayCore
import PushRelayPostgres
import PushRelayStore
import PushRelayTestHarness
import Testing

/// A running instance whose database another instance has migrated past what it knows (a rolling upgrade with a
/// schema change): it notices within its check interval, refuses every request with a storage error that says why,
/// and its health stays failing, so `/ready` takes it out of a load balancer.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresSchemaWatchTests {
    @Test func anInstanceOnANewerSchemaRefusesEveryRequestAndSaysWhy() async throws {
        let database = try await PostgresTestDatabase.create()
        var config = try database.configuration()
        config.schemaCheckInterval = .milliseconds(100)
        let storage = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let day = UTCDay(string: "2026-11-26")!
        _ = try await storage.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        #expect(storage.engine.health == .ok)

        // A newer PushRelay migrates the database to a version this build does not know.
        let known = PostgresStorageEngine.migrations.map(\.version).max() ?? 0
        _ = try await database.psql(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (\(known + 1), 'from_a_newer_build', '2026-11-26T00:00:00Z')"
        )
        try await eventually("the instance notices the newer schema") { storage.engine.health.state == .failing }
        #expect(storage.engine.health.message?.contains("version \(known + 1)") == true, "\(storage.engine.health)")

        let error = await #expect(throws: StorageError.self) {
            try await storage.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        }
        #expect(error == .schemaTooNew(found: known + 1, known: known))
        #expect(error is any StorageFailure, "answered 503, as storage that cannot be used")
        #expect(error?.description.contains("newer than this PushRelay knows") == true)
        // Nothing clears it: a probe is refused as well.
        #expect(await storage.engine.probe().state == .failing)
        let counted = try await database.psql("SELECT attempts FROM daily_usage WHERE push_token = 't'")
        #expect(counted.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "the refused request counted nothing: \(counted)")
        try await storage.engine.flushAndClose()
        try await database.drop()
    }
}
