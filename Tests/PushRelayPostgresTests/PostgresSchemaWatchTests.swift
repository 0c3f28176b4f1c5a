import Foundation
import PushRelayCore
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayPostgres

/// A running instance whose database a newer instance has migrated: an expand migration leaves it serving; once a
/// contract migration it does not know is applied (`migrate --finish`), it notices at its next check, refuses every
/// request with a storage error that says why, and its health stays failing, so `/ready` takes it out of a load
/// balancer. The checks run on the engine's clock, here a manual one.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)), .timeLimit(.minutes(2)))
struct PostgresSchemaWatchTests {
    @Test func anInstanceOnANewerSchemaRefusesEveryRequestAndSaysWhy() async throws {
        let database = try await PostgresTestDatabase.create()
        var config = try database.configuration()
        let interval = Duration.seconds(30)
        config.schemaCheckInterval = interval
        let clock = ManualClock()
        let engine = try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger, clock: clock)
        let storage = Storage.postgres(engine)
        let day = UTCDay(string: "2026-11-26")!
        func reserve() async throws {
            _ = try await storage.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        }
        try await reserve()
        #expect(engine.health == .ok)
        #expect(clock.pendingDelays == [interval], "one timer: the next check")

        // A check that finds the schema known arms the next one.
        clock.advance(by: interval)
        await engine.schemaCheckEnded()
        #expect(clock.pendingDelays == [interval])
        #expect(engine.health == .ok)

        // A newer PushRelay starts: its expand migration leaves this build serving.
        let known = PostgresStorageEngine.migrations.map(\.version).max() ?? 0
        _ = try await database.psql(
            "INSERT INTO schema_migrations (version, name, applied_at, requires) VALUES (\(known + 1), 'expand_of_a_newer_build', '2026-11-26T00:00:00Z', 0)"
        )
        clock.advance(by: interval)
        await engine.schemaCheckEnded()
        try await reserve()
        #expect(engine.health == .ok)
        #expect(clock.pendingDelays == [interval])

        // `migrate --finish` applies the newer build's contract migration.
        _ = try await database.psql(
            "INSERT INTO schema_migrations (version, name, applied_at, requires) VALUES (\(known + 2), 'contract_of_a_newer_build', '2026-11-26T00:00:00Z', \(known + 1))"
        )
        // Not noticed before the next check is due.
        clock.advance(by: interval - .milliseconds(1))
        try await reserve()
        #expect(engine.health == .ok)

        clock.advance(by: .milliseconds(1))
        await engine.schemaCheckEnded()
        #expect(engine.health.state == .failing)
        #expect(engine.health.message?.contains("version \(known + 1)") == true, "\(engine.health)")
        #expect(clock.pendingDelays.isEmpty, "no more checks once the schema is too new")

        let error = await #expect(throws: StorageError.self) { try await reserve() }
        #expect(error == .schemaTooNew(found: known + 1, known: known))
        #expect(error is any StorageFailure, "answered 503, as storage that cannot be used")
        #expect(error?.description.contains("this one knows \(known)") == true)
        // Nothing clears it: a probe is refused as well.
        #expect(await engine.probe().state == .failing)
        let counted = try await database.psql("SELECT attempts FROM daily_usage WHERE push_token = 't'")
        #expect(counted.trimmingCharacters(in: .whitespacesAndNewlines) == "3", "the refused request counted nothing: \(counted)")
        try await engine.flushAndClose()
        try await database.drop()
    }

    @Test func closingTheEngineStopsTheSchemaWatch() async throws {
        let database = try await PostgresTestDatabase.create()
        var config = try database.configuration()
        config.schemaCheckInterval = .seconds(30)
        let clock = ManualClock()
        let engine = try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger, clock: clock)
        #expect(clock.pendingDelays == [.seconds(30)])
        try await engine.flushAndClose()
        #expect(clock.pendingDelays.isEmpty, "the check's timer and the close's give-up are both cancelled")
        clock.advance(by: .seconds(30))
        await engine.schemaCheckEnded()
        #expect(clock.pendingDelays.isEmpty, "no check ran, none was armed")
        try await database.drop()
    }
}
