import Foundation
import PushRelayCore
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayPostgres

/// Hand-offs between instances (`NOTIFY pushrelay_<instance>`): heard by the instance they name, and heard again after
/// the listening connection was lost (PostgreSQL restarted, or the connection was killed).
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresPushChannelRoutingTests {
    @Test func handOffsAreHeardAgainAfterTheListeningConnectionIsKilled() async throws {
        let database = try await PostgresTestDatabase.create()
        let config = try database.configuration()
        let a = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let b = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let (routingA, routingB) = (try #require(a.routing), try #require(b.routing))
        let heard = Locked<[String]>([])
        let listening = Task {
            for await id in routingA.handOffs() { heard.withLock { $0.append(id) } }
        }
        defer { listening.cancel() }

        /// Hands off new message ids to A until A hears one (its LISTEN may not be in place yet).
        func heardByA(_ prefix: String) async throws {
            var n = 0
            try await eventually("A hears a hand-off \(prefix)", seconds: 20) {
                n += 1
                try await routingB.handOff(messageID: "\(prefix)-\(n)", to: routingA.instanceID)
                try await Task.sleep(for: .milliseconds(50))
                return heard.withLock { $0.contains { $0.hasPrefix(prefix) } }
            }
        }

        try await heardByA("before")
        let killed = try await database.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'"
        )
        #expect(killed.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "the one listening connection: \(killed)")
        try await heardByA("after")
        // B's hand-offs to itself are not heard by A.
        try await routingB.handOff(messageID: "for-b", to: routingB.instanceID)
        try await consistently("A does not hear a hand-off to B", for: .milliseconds(300)) { !heard.withLock { $0.contains("for-b") } }
        listening.cancel()
        try await a.engine.flushAndClose()
        try await b.engine.flushAndClose()
    }
}
