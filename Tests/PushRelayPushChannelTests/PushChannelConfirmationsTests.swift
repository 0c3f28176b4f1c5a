import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import PushRelayHomeAssistant
import PushRelayPushChannel
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// Messages waiting for a confirm, in simulated time: the confirm timer, the cloud fallback it starts, the channel's
/// places, and a channel that ended before its message was tracked. The storage is a real SQLite file and the cloud
/// route the real one, through the dispatcher to a scripted provider.
///
/// ThreadSanitizer: confirm timers, raced by the confirms and the ends of channels.
@Suite struct PushChannelConfirmationsTests {
    struct Rig {
        let confirmations: PushChannelConfirmations
        let store: any PushChannelStorage
        let cloud: ScriptedProvider
        let clock: ManualClock
        let frames: Locked<[String]>
        let connection: PushChannelConnection
        let sub: PushChannelSubscription

        /// Stores a message for `text`, takes a place on the channel and sends it there, as the hub does.
        func send(_ text: String) async throws -> PushChannelMessage {
            let n = try PushChannelConfirmationsTests.notification(text)
            let message = PushChannelConfirmationsTests.message(n)
            try await store.save(message)
            #expect(confirmations.reserve(on: sub))
            confirmations.send(message, n, on: sub, reserved: true)
            return message
        }
    }

    /// Runs `body` with a rig whose `BackgroundWork` runs beside it.
    static func with(maxPending: Int = 100, _ body: @Sendable (Rig) async throws -> Void) async throws {
        let database = try PushRelayDatabase(path: TestServer.tempPath())
        try database.migrate()
        let storage = Storage.sqlite(database)
        let logger = Logger(label: "test")
        let clock = ManualClock("2026-11-21T12:00:00Z")
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let dispatcher = Dispatcher(
            providers: ["cloud": cloud],
            quota: storage.quota,
            deliveries: storage.deliveries,
            settings: DispatcherSettings(DeliverySettings()),
            // The cloud route's deadline and storage share on a clock nobody moves (not the one the test steps through
            // the confirm timeouts): however slowly a loaded machine runs the rig, its fallback is never answered as a
            // storage stall.
            clock: ManualClock("2026-11-21T12:00:00Z"),
            metrics: nil,
            logger: logger
        )
        var settings = PushChannelSettings()
        settings.confirmTimeoutMs = 1_000
        settings.maxPending = maxPending
        let apps = AppProviders([.init(match: "*", provider: "cloud")])
        let sender = HomeAssistantCloudSender(
            apps: apps,
            dispatcher: dispatcher,
            quota: storage.quota,
            policy: QuotaPolicy(dailyLimit: 100),
            sealer: PayloadSealer(apps: apps, devices: storage.devices, logger: logger),
            localOnly: LocalOnlyQueue(store: storage.pushChannel, settings: settings, clock: clock),
            iosOptions: IOSTranslationOptions(),
            clock: clock,
            logger: logger
        )
        let work = BackgroundWork(logger: logger)
        let confirmations = PushChannelConfirmations(
            store: storage.pushChannel,
            settings: settings,
            fallback: sender,
            sharedWithOtherInstances: false,
            work: work,
            clock: clock,
            logger: logger
        )
        let frames = Locked<[String]>([])
        let connection = PushChannelConnection(
            peer: "test",
            bufferLimit: 64,
            sink: .init(write: { text in frames.withLock { $0.append(text) } }, close: { _, _ in }),
            logger: logger
        )
        let sub = PushChannelSubscription(connection: connection, id: 7, webhookID: "hook-1", pushToken: nil, supportConfirm: true, fallback: true)
        let running = Task { try await work.run() }
        do {
            try await body(
                Rig(
                    confirmations: confirmations,
                    store: storage.pushChannel,
                    cloud: cloud,
                    clock: clock,
                    frames: frames,
                    connection: connection,
                    sub: sub
                )
            )
        } catch {
            running.cancel()
            throw error
        }
        running.cancel()
    }

    static func notification(_ text: String) throws -> HANotification {
        try HANotification(body: [
            "message": .string(text), "push_token": "confirm-test-token",
            "registration_info": ["app_id": "io.homeassistant.companion.android", "webhook_id": "hook-1"],
        ])
    }

    static func message(_ n: HANotification) -> PushChannelMessage {
        var settings = PushChannelSettings()
        settings.confirmTimeoutMs = 1_000
        return PushChannelMessage(n, platform: .android, state: .unconfirmed, fallback: true, now: Date(), settings: settings)
    }

    @Test func anUnconfirmedMessageGoesToTheCloudOnceAtItsTimeout() async throws {
        try await Self.with { rig in
            let message = try await rig.send("late")
            try await eventually("the event is written") { rig.frames.withLock { $0 }.contains { $0.contains(message.id) } }
            rig.clock.advance(by: 0.999)
            #expect(rig.confirmations.count == 1)
            rig.clock.advance(by: 0.001)
            try await eventually("the message goes by the cloud route") { rig.cloud.callCount == 1 }
            #expect(rig.cloud.deliveries.first?.notification.fcmMessage["data"]?["message"] == "late")
            #expect(rig.confirmations.count == 0)
            #expect(try await rig.store.all().isEmpty, "its row is settled")
            // A confirm after the timeout finds nothing.
            #expect(!(await rig.confirmations.confirm(message.id, webhookID: "hook-1", connection: rig.connection)))
            #expect(rig.cloud.callCount == 1)
        }
    }

    @Test func aConfirmInTimeStopsTheTimerAndRemovesTheMessage() async throws {
        try await Self.with { rig in
            let message = try await rig.send("on time")
            #expect(rig.clock.pendingDelays.count == 1)
            // Only on the connection that got it, for its webhook id.
            let stranger = PushChannelConnection(
                peer: "other",
                bufferLimit: 4,
                sink: .init(write: { _ in }, close: { _, _ in }),
                logger: Logger(label: "t")
            )
            #expect(!(await rig.confirmations.confirm(message.id, webhookID: "hook-1", connection: stranger)))
            #expect(!(await rig.confirmations.confirm(message.id, webhookID: "hook-2", connection: rig.connection)))
            #expect(await rig.confirmations.confirm(message.id, webhookID: "hook-1", connection: rig.connection))
            #expect(rig.clock.pendingDelays.count == 0)
            #expect(rig.confirmations.count == 0)
            #expect(try await rig.store.all().isEmpty)
            rig.clock.advance(by: 10)
            #expect(rig.cloud.callCount == 0)
        }
    }

    @Test func aChannelHasMaxPendingPlacesAndNoneOnceItEnded() async throws {
        try await Self.with(maxPending: 2) { rig in
            #expect(rig.confirmations.reserve(on: rig.sub))
            #expect(rig.confirmations.reserve(on: rig.sub))
            #expect(!rig.confirmations.reserve(on: rig.sub), "the third waits for a place: the caller takes the cloud route")
            #expect(rig.confirmations.end(rig.sub).isEmpty)
            #expect(!rig.confirmations.reserve(on: rig.sub), "an ended channel takes nothing more")
        }
    }

    /// The rule across the parts' locks: a message whose channel ended (replaced, closed) before the message was
    /// tracked is not left on it. It is released at once, here to the cloud.
    @Test func aMessageForAChannelThatEndedMeanwhileIsReleasedNotTracked() async throws {
        try await Self.with { rig in
            let n = try Self.notification("raced")
            let message = Self.message(n)
            try await rig.store.save(message)
            #expect(rig.confirmations.reserve(on: rig.sub))
            // The channel is replaced between the place and the send.
            #expect(rig.confirmations.end(rig.sub).isEmpty)
            rig.confirmations.send(message, n, on: rig.sub, reserved: true)
            #expect(rig.confirmations.count == 0)
            #expect(rig.clock.pendingDelays.count == 0, "its timer was stopped")
            try await eventually("the message goes by the cloud route") { rig.cloud.callCount == 1 }
            #expect(!rig.frames.withLock { $0 }.contains { $0.contains(message.id) }, "nothing was written on the ended channel")
        }
    }

    @Test func endingAChannelHandsBackItsUnconfirmedMessages() async throws {
        try await Self.with { rig in
            let messages = [try await rig.send("one"), try await rig.send("two")]
            #expect(rig.clock.pendingDelays.count == 2)
            let taken = rig.confirmations.end(rig.sub)
            #expect(Set(taken.map(\.id)) == Set(messages.map(\.id)))
            #expect(rig.clock.pendingDelays.count == 0)
            #expect(rig.confirmations.count == 0)
            rig.clock.advance(by: 10)
            #expect(rig.cloud.callCount == 0, "what the caller does with them is the caller's business")
        }
    }
}
