import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// Who may hold a device's push channel: the attacks of a stranger who knows a webhook id, over real
/// websockets, in both arrival orders, and the binding following Home Assistant's token refreshes and re-registrations.
///
/// ThreadSanitizer: a device's binding, raced by its own connections and a stranger's.
@Suite struct PushChannelBindingTests {
    static let device = "device-push-token:" + String(repeating: "d", count: 40)
    static let stranger = "stranger-push-token:" + String(repeating: "s", count: 40)
    static let webhook = "hook-1"

    static func subscribe(_ c: WSTestClient, id: Int64, webhookID: String = PushChannelBindingTests.webhook) -> JSONValue {
        ["id": .int(id), "type": "mobile_app/push_notification_channel", "webhook_id": .string(webhookID), "support_confirm": true]
    }

    /// Connects and authenticates with `token` (any push-token-shaped string authenticates).
    static func authenticated(_ s: TestServer, _ token: String) async throws -> WSTestClient {
        let c = WSTestClient.connect(port: s.port)
        #expect(try await c.receive()["type"] == "auth_required")
        c.send(["type": "auth", "access_token": .string(token)])
        #expect(try await c.receive()["type"] == "auth_ok")
        return c
    }

    static func expectRefused(_ reply: JSONValue, id: Int64, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply["id"] == .int(id), sourceLocation: sourceLocation)
        #expect(reply["success"] == false, sourceLocation: sourceLocation)
        #expect(reply["error"]?["code"] == "unauthorized", "\(reply)", sourceLocation: sourceLocation)
        #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    static func post(
        _ s: TestServer,
        _ message: String,
        token: String = PushChannelBindingTests.device,
        webhookID: String = PushChannelBindingTests.webhook,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> HTTPReply {
        let r = try await s.android(PushChannelRig.body(message, token: token, webhookID: webhookID))
        #expect(r.status == 201, "\(r.rawBody)", sourceLocation: sourceLocation)
        return r
    }

    func withServer(limit: Int = 50, _ body: @Sendable (TestServer, ScriptedProvider) async throws -> Void) async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], configure: PushChannelRig.cloud(10_000) { $0.maxFailedAuthsPerMinute = limit }) {
            s in
            try await body(s, cloud)
        }
    }

    @Test func aStrangerArrivingAfterTheDeviceIsRefusedAndTheDeviceKeepsItsChannel() async throws {
        try await withServer { s, cloud in
            _ = try await Self.post(s, "registers the pair")
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            let stranger = try await Self.authenticated(s, Self.stranger)
            stranger.send(Self.subscribe(stranger, id: 1))
            Self.expectRefused(try await stranger.receive(), id: 1)

            let r = try await Self.post(s, "still mine")
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "delivered over the device's channel")
            #expect(try await device.receive()["event"]?["message"] == "still mine")
            #expect(cloud.callCount == 1, "only the first notification went to the cloud")
            #expect(stranger.pendingFrames.isEmpty)
        }
    }

    @Test func aStrangerArrivingBeforeTheDeviceIsRefusedOnceHomeAssistantHasPosted() async throws {
        try await withServer { s, _ in
            _ = try await Self.post(s, "registers the pair")
            let stranger = try await Self.authenticated(s, Self.stranger)
            stranger.send(Self.subscribe(stranger, id: 1))
            Self.expectRefused(try await stranger.receive(), id: 1)
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            _ = try await Self.post(s, "for the device")
            #expect(try await device.receive()["event"]?["message"] == "for the device")
        }
    }

    @Test func aProvisionalStrangerIsClosedByHomeAssistantsFirstNotification() async throws {
        try await withServer { s, cloud in
            // Nobody is bound yet: the stranger gets a provisional channel for the webhook id.
            let stranger = try await Self.authenticated(s, Self.stranger)
            stranger.send(Self.subscribe(stranger, id: 1))
            #expect(try await stranger.receive()["success"] == true)
            // The device cannot take it over before Home Assistant has said whose it is…
            let early = try await Self.authenticated(s, Self.device)
            early.send(Self.subscribe(early, id: 1))
            Self.expectRefused(try await early.receive(), id: 1)
            // …and Home Assistant's first notification does: it goes by the cloud (not to the stranger), and the
            // stranger's channel is closed.
            let r = try await Self.post(s, "first")
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == false)
            #expect(cloud.callCount == 1)
            #expect(await stranger.waitUntilClosed())
            #expect(stranger.pendingFrames.isEmpty, "the stranger never saw a notification")
            // Now the device subscribes, and the stranger cannot come back.
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            let again = try await Self.authenticated(s, Self.stranger)
            again.send(Self.subscribe(again, id: 1))
            Self.expectRefused(try await again.receive(), id: 1)
            _ = try await Self.post(s, "second")
            #expect(try await device.receive()["event"]?["message"] == "second")
        }
    }

    @Test func aProvisionalDeviceChannelIsNeverReplacedByAStranger() async throws {
        try await withServer { s, _ in
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            let stranger = try await Self.authenticated(s, Self.stranger)
            stranger.send(Self.subscribe(stranger, id: 1))
            Self.expectRefused(try await stranger.receive(), id: 1)
            // Home Assistant's first notification goes by the cloud (the provider checks the token) and pairs the
            // device's provisional channel; the next one reaches it there.
            let r = try await Self.post(s, "hello")
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == false)
            #expect(
                try await SQLitePushChannelStore(database: s.database).bindings() == [
                    PushChannelBinding(pushToken: Self.device, webhookID: Self.webhook)
                ]
            )
            let next = try await Self.post(s, "again")
            #expect(next["messageId"]?.stringValue?.hasPrefix("local:") == true)
            #expect(try await device.receive()["event"]?["message"] == "again")
        }
    }

    @Test func aTokenRefreshMovesTheBindingAndClosesTheOldChannel() async throws {
        try await withServer { s, _ in
            _ = try await Self.post(s, "old token")
            let old = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            let refreshed = Self.device + "-refreshed"
            _ = try await Self.post(s, "new token", token: refreshed)
            #expect(await old.waitUntilClosed(), "the old token's channel is closed")
            let retry = try await Self.authenticated(s, Self.device)
            retry.send(Self.subscribe(retry, id: 1))
            Self.expectRefused(try await retry.receive(), id: 1)
            let device = try await WSTestClient.subscribed(port: s.port, token: refreshed, webhookID: Self.webhook, id: 1)
            _ = try await Self.post(s, "after the refresh", token: refreshed)
            #expect(try await device.receive()["event"]?["message"] == "after the refresh")
        }
    }

    @Test func aReRegistrationMovesTheTokenToItsNewWebhook() async throws {
        try await withServer { s, _ in
            _ = try await Self.post(s, "first registration", webhookID: "hook-old")
            let old = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: "hook-old", id: 1)
            let moved = try await Self.post(s, "second registration", webhookID: "hook-new")
            // A post naming the token proves nothing about the device: the old channel stays open, but what is posted
            // with the new pair does not go to it.
            #expect(moved["messageId"]?.stringValue?.hasPrefix("local:") == false)
            #expect(old.pendingFrames.isEmpty)
            let retry = try await Self.authenticated(s, Self.device)
            retry.send(Self.subscribe(retry, id: 1, webhookID: "hook-old"))
            Self.expectRefused(try await retry.receive(), id: 1)
            retry.send(Self.subscribe(retry, id: 2, webhookID: "hook-new"))
            #expect(try await retry.receive()["success"] == true)
            // The old webhook id is free again, and nobody else may take the new one.
            let stranger = try await Self.authenticated(s, Self.stranger)
            stranger.send(Self.subscribe(stranger, id: 1, webhookID: "hook-new"))
            Self.expectRefused(try await stranger.receive(), id: 1)
        }
    }

    @Test func aPushTokenAloneCannotReadTheDevicesChannel() async throws {
        try await withServer { s, cloud in
            _ = try await Self.post(s, "binds the device")
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            // A stranger who knows the device's push token posts it with a webhook id of their own (accepted: it
            // reaches the device by the cloud and is counted on its quota)…
            let moved = try await Self.post(s, "stranger's post", webhookID: "hook-attacker")
            #expect(moved["messageId"]?.stringValue?.hasPrefix("local:") == false)
            // …and subscribes with the token under that webhook id.
            let attacker = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: "hook-attacker", id: 1)
            // The device's channel was not closed, and Home Assistant's next notification goes to it alone.
            let r = try await Self.post(s, "Front door code is 4711")
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "\(r.rawBody)")
            #expect(try await device.receive()["event"]?["message"] == "Front door code is 4711")
            #expect(attacker.pendingFrames.isEmpty, "the stranger's socket got nothing of the device's")
            #expect(cloud.callCount == 2, "the binding post and the stranger's own went by the cloud")
        }
    }

    @Test func aPushTokenAloneCannotReadTheDevicesQueuedMessages() async throws {
        try await withServer { s, _ in
            _ = try await Self.post(s, "binds the device")
            // The device's channel asks for no fallback: what it does not confirm stays stored for it.
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1, fallback: false)
            _ = try await Self.post(s, "Front door code is 4711")
            #expect(try await device.receive()["event"]?["message"] == "Front door code is 4711")
            device.close()
            _ = await device.waitUntilClosed()
            let store = SQLitePushChannelStore(database: s.database)
            try await eventually("the message is queued for the device") { (try? await store.all().map(\.state)) == [.queued] }
            // A stranger who knows the token moves its binding with a post of their own and subscribes under that pair.
            _ = try await Self.post(s, "stranger's post", webhookID: "hook-attacker")
            let attacker = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: "hook-attacker", id: 1)
            // The channel answers in order: whatever the subscription replayed comes before the pong.
            attacker.send(["type": "ping", "id": 2])
            #expect(try await attacker.receive() == ["id": 2, "type": "pong"], "the stranger got the device's queued message")
            // The device's message is still there for the device: Home Assistant's next post binds the pair back.
            _ = try await Self.post(s, "binds it back")
            let again = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1, fallback: false)
            #expect(try await again.receive()["event"]?["message"] == "Front door code is 4711")
        }
    }

    @Test func anUncountedCommandDoesNotMoveABinding() async throws {
        try await withServer { s, cloud in
            _ = try await Self.post(s, "binds the device")
            let device = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            // A stranger who knows the device's token posts a quota-exempt command with a webhook id of their own: the
            // provider takes it, uncounted, and it moves nothing.
            let command = try await Self.post(s, "request_location_update", webhookID: "hook-attacker")
            #expect(command["rateLimits"]?["attempts"] == 1, "the command was not counted: \(command.rawBody)")
            #expect(cloud.callCount == 2)
            #expect(
                try await SQLitePushChannelStore(database: s.database).bindings() == [
                    PushChannelBinding(pushToken: Self.device, webhookID: Self.webhook)
                ]
            )
            let attacker = try await Self.authenticated(s, Self.device)
            attacker.send(Self.subscribe(attacker, id: 1, webhookID: "hook-attacker"))
            Self.expectRefused(try await attacker.receive(), id: 1)
            // The device keeps its channel, and a reconnect of its own is taken.
            let r = try await Self.post(s, "still yours")
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true, "\(r.rawBody)")
            #expect(try await device.receive()["event"]?["message"] == "still yours")
            _ = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
        }
    }

    @Test func aDeviceRefusedAgainAndAgainDoesNotLockItsAddressOut() async throws {
        try await withServer(limit: 3) { s, _ in
            _ = try await Self.post(s, "binds the device")
            // Someone who knows the token spends a counted notification to move the binding to their webhook id.
            _ = try await Self.post(s, "moves it", webhookID: "hook-attacker")
            // The device reconnects with its own pair again and again: refused each time, counted once a minute.
            for attempt in 1...5 {
                let retry = try await Self.authenticated(s, Self.device)
                retry.send(Self.subscribe(retry, id: 1))
                Self.expectRefused(try await retry.receive(), id: 1)
                #expect(!retry.isClosed, "attempt \(attempt): the address is not locked out")
            }
            // Home Assistant's next notification moves the binding back, and the device is taken at once.
            _ = try await Self.post(s, "Home Assistant again")
            _ = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
        }
    }

    @Test func bindingsSurviveARestart() async throws {
        let path = TestServer.tempPath()
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(dbPath: path, providers: ["cloud": cloud], configure: PushChannelRig.cloud()) { s in
            _ = try await Self.post(s, "binds")
        }
        try await TestServer.with(dbPath: path, providers: ["cloud": cloud], configure: PushChannelRig.cloud()) { s in
            let stranger = try await Self.authenticated(s, Self.stranger)
            stranger.send(Self.subscribe(stranger, id: 1))
            Self.expectRefused(try await stranger.receive(), id: 1)
            _ = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
        }
    }

    @Test func refusedSubscriptionsCountTowardTheAddressLimit() async throws {
        try await withServer(limit: 3) { s, _ in
            for n in 1...3 { _ = try await Self.post(s, "binds \(n)", token: Self.device + "-\(n)", webhookID: "hook-\(n)") }
            // A stranger guessing webhook ids: each refusal counts as a failed credential check of its address.
            let stranger = try await Self.authenticated(s, Self.stranger)
            for n in 1...3 {
                stranger.send(Self.subscribe(stranger, id: Int64(n), webhookID: "hook-\(n)"))
                Self.expectRefused(try await stranger.receive(), id: Int64(n))
            }
            #expect(await stranger.waitUntilClosed(), "the third refusal used up the budget and closed the connection")
            // For the rest of the minute every credential from that address is refused, a real one included.
            let device = WSTestClient.connect(port: s.port)
            _ = try await device.receive()
            device.send(["type": "auth", "access_token": .string(Self.device + "-1")])
            let blocked = try await device.receive()
            #expect(blocked["type"] == "auth_invalid")
            #expect(blocked["message"]?.stringValue?.contains("Too many failed") == true)
        }
    }

    @Test func aConfirmForAnotherChannelsMessageIsRefused() async throws {
        try await withServer { s, cloud in
            let other = "other-device-token:" + String(repeating: "o", count: 40)
            _ = try await Self.post(s, "binds A")
            _ = try await Self.post(s, "binds B", token: other, webhookID: "hook-B")
            let a = try await WSTestClient.subscribed(port: s.port, token: Self.device, webhookID: Self.webhook, id: 1)
            let b = try await WSTestClient.subscribed(port: s.port, token: other, webhookID: "hook-B", id: 1)
            _ = try await Self.post(s, "for A")
            let event = try await a.receive()
            let confirmID = try #require(event["event"]?["hass_confirm_id"]?.stringValue)
            // B knows A's confirm id (say it guessed it): naming A's webhook id or its own, the confirm is refused.
            for (id, webhook) in [(Int64(2), Self.webhook), (3, "hook-B")] {
                b.send([
                    "id": .int(id), "type": "mobile_app/push_notification_confirm", "webhook_id": .string(webhook), "confirm_id": .string(confirmID),
                ])
                let reply = try await b.receive()
                #expect(reply["success"] == false)
                #expect(reply["error"]?["code"] == "not_found")
            }
            // A's own confirm still works: the message was not consumed by B's attempts.
            a.send(["id": 2, "type": "mobile_app/push_notification_confirm", "webhook_id": .string(Self.webhook), "confirm_id": .string(confirmID)])
            #expect(try await a.receive()["success"] == true)
            #expect(cloud.callCount == 2, "only the two binding notifications went to the cloud")
        }
    }
}
