import Foundation
import PushRelayCore
import PushRelayPostgres
import PushRelayStore
import PushRelayTestHarness
import Testing

/// PostgreSQL going away while PushRelay runs: requests fail as storage errors (the server's 503) within the
/// connection wait, health turns failing, and once PostgreSQL is back the pool reconnects by itself.
///
/// Wall clock: postgres-nio's connection attempts and their 1 s timeout run on its own timers, outside the time port.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresOutageTests {
    @Test func aLostServerFailsRequestsAndThePoolReconnectsWhenItIsBack() async throws {
        _ = try await PostgresTestServer.require()
        // A server of its own: this test stops it.
        let server = try await onThread { try PostgresServerProcess.start() }
        defer { Thread { server.stop() }.start() }
        var config = try await PostgresTestDatabase.create(on: server, name: "outage").configuration()
        config.connectionWait = .seconds(1)
        // Opening gets its full connect timeout (a loaded machine); requests wait 1 s for a connection.
        config.connectTimeout = .seconds(10)
        let storage = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        // A loaded machine may take more than the 1 s request wait to open the pool's connections: wait for them.
        try await eventually("the pool is up", seconds: 30) { await storage.engine.probe().isOK }
        let day = UTCDay(string: "2026-11-21")!
        _ = try await storage.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        #expect(storage.engine.health == .ok)

        try await onThread { server.halt() }
        let error = await #expect(throws: PostgresStoreError.self) {
            try await storage.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        }
        #expect(try #require(error).isFault)
        #expect(!(try #require(error).description.contains("\n")))
        await storage.engine.probe()
        #expect(storage.engine.health.state == .failing)

        try await onThread { try server.resume() }
        try await eventually("the pool reconnects", seconds: 30) { await storage.engine.probe().isOK }
        let r = try await storage.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        #expect(r.decision.counters.attempts == 2, "nothing counted twice, nothing lost")
        try await storage.engine.flushAndClose()
    }
}
