import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import PushRelayPushChannel
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// When a notification asks the database which other instance holds its device's channel: not while the last
/// heartbeat found no other instance's channel and no presence claim came since, and always when the listen for
/// claims is down. The routing is scripted; the storage is a real SQLite file.
@Suite struct PushChannelInstancesTests {
    /// A routing whose heartbeat answer is set by the test, and which counts the holder lookups.
    final class ScriptedRouting: PushChannelRouting {
        let othersHold = Locked(false)
        let lookups = Locked(0)
        let instanceID = "i-test"

        func heartbeat(staleAfter: Duration) async throws -> Bool { othersHold.withLock { $0 } }
        func claimPresence(webhookID: String, pushToken: String?, supportConfirm: Bool, fallback: Bool) async throws {}
        func releasePresence(webhookID: String) async throws {}
        func holder(webhookID: String?, pushToken: String, staleAfter: Duration) async throws -> PushChannelHolder? {
            lookups.withLock { $0 += 1 }
            return nil
        }
        func handOff(messageID: String, to instance: String) async throws {}
        func events() -> AsyncStream<PushChannelRoutingEvent> { AsyncStream { $0.finish() } }
        func message(id: String) async throws -> PushChannelMessage? { nil }
        func orphanedMessages(staleAfter: Duration, limit: Int) async throws -> [PushChannelMessage] { [] }
        func forgetDeadInstances(staleAfter: Duration) async throws -> Int { 0 }
    }

    struct NoFallback: PushChannelFallback {
        func fallBack(_ n: HANotification, platform: HAPlatform) async -> String? { "not in this test" }
    }

    static func instances(_ routing: ScriptedRouting) throws -> PushChannelInstances {
        let database = try PushRelayDatabase(path: TestServer.tempPath())
        try database.migrate()
        let store = Storage.sqlite(database).pushChannel
        let logger = Logger(label: "test")
        let clock = ManualClock("2026-11-21T12:00:00Z")
        let settings = PushChannelSettings()
        let channels = PushChannelIndex(maxChannels: 10)
        let confirmations = PushChannelConfirmations(
            store: store,
            settings: settings,
            fallback: NoFallback(),
            sharedWithOtherInstances: true,
            work: BackgroundWork(logger: logger),
            clock: clock,
            logger: logger
        )
        return PushChannelInstances(
            routing: routing,
            store: store,
            settings: settings,
            channels: channels,
            confirmations: confirmations,
            waiting: LocalOnlyQueue(store: store, settings: settings, clock: clock),
            clock: clock,
            logger: logger
        )
    }

    static func notification() throws -> HANotification {
        try HANotification(body: ["message": "m", "push_token": "instances-test-token", "registration_info": ["webhook_id": "hook-1"]])
    }

    @Test func asksWhichInstanceHoldsAChannelOnlyWhileAnotherMay() async throws {
        let routing = ScriptedRouting()
        let instances = try Self.instances(routing)
        let n = try Self.notification()

        // Not yet listening for claims: every notification asks.
        try await instances.heartbeat()
        #expect(await instances.deliver(n, platform: .android) == nil)
        #expect(routing.lookups.withLock { $0 } == 1)

        // Listening, and a heartbeat since found no other instance's channel: none asks.
        await instances.received(.listening)
        try await instances.heartbeat()
        #expect(!instances.othersMayHoldChannels)
        #expect(await instances.deliver(n, platform: .android) == nil)
        #expect(routing.lookups.withLock { $0 } == 1)

        // Another instance claims a channel: ask again, until a heartbeat says none holds one.
        await instances.received(.presenceClaimed)
        #expect(await instances.deliver(n, platform: .android) == nil)
        #expect(routing.lookups.withLock { $0 } == 2)
        routing.othersHold.withLock { $0 = true }
        try await instances.heartbeat()
        #expect(instances.othersMayHoldChannels)
        routing.othersHold.withLock { $0 = false }
        try await instances.heartbeat()
        #expect(!instances.othersMayHoldChannels)

        // The listen is lost: claims could be missed, so every notification asks until it is back.
        await instances.received(.stoppedListening)
        try await instances.heartbeat()
        #expect(await instances.deliver(n, platform: .android) == nil)
        #expect(routing.lookups.withLock { $0 } == 3)
        await instances.received(.listening)
        try await instances.heartbeat()
        #expect(!instances.othersMayHoldChannels)
    }
}
