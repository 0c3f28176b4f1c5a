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
            for await case .handOff(let id) in routingA.events() { heard.withLock { $0.append(id) } }
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

    /// A heartbeat answers whether another live instance holds a channel, and a presence claim is told to the other
    /// listening instances at once (not to the claimer itself), so that an instance can skip asking which instance
    /// holds a device's channel while none other holds any.
    @Test func heartbeatsAndPresenceClaimsTellWhetherAnotherInstanceHoldsAChannel() async throws {
        let database = try await PostgresTestDatabase.create()
        let config = try database.configuration()
        let a = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let b = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let (routingA, routingB) = (try #require(a.routing), try #require(b.routing))
        var heardByA = routingA.events().makeAsyncIterator()
        #expect(await heardByA.next() == .listening)
        let live = Duration.seconds(30)
        #expect(try await routingA.heartbeat(staleAfter: live) == false)
        #expect(try await routingB.heartbeat(staleAfter: live) == false)

        try await routingB.claimPresence(webhookID: "w1", pushToken: nil, supportConfirm: true, fallback: true)
        #expect(await heardByA.next() == .presenceClaimed)
        #expect(try await routingA.heartbeat(staleAfter: live) == true)
        #expect(try await routingB.heartbeat(staleAfter: live) == false, "B's own channel is not another instance's")

        // A's own claim is not told to A: the next thing A hears is B's hand-off, sent after it.
        try await routingA.claimPresence(webhookID: "w2", pushToken: "t2", supportConfirm: false, fallback: true)
        try await routingB.handOff(messageID: "after-claim", to: routingA.instanceID)
        #expect(await heardByA.next() == .handOff(messageID: "after-claim"))
        #expect(try await routingB.heartbeat(staleAfter: live) == true)

        // B gives its channel up: A finds no other instance's channel again; a stale B would not count either.
        try await routingB.releasePresence(webhookID: "w1")
        #expect(try await routingA.heartbeat(staleAfter: live) == false)
        try await routingB.claimPresence(webhookID: "w1", pushToken: nil, supportConfirm: true, fallback: true)
        #expect(await heardByA.next() == .presenceClaimed)
        try await database.psql("UPDATE instances SET heartbeat_at = now() - interval '1 hour' WHERE id = '\(routingB.instanceID)'")
        #expect(try await routingA.heartbeat(staleAfter: live) == false)

        try await a.engine.flushAndClose()
        try await b.engine.flushAndClose()
        try await database.drop()
    }
}
