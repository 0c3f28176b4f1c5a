import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayPushChannel
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The push channel over real websocket connections on loopback.
///
/// ThreadSanitizer: channels opened, replaced and closed on the event loops while notifications are sent to them.
@Suite struct PushChannelTests {

    @Test func authenticationOutcomes() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let ok = WSTestClient.connect(port: s.port)
            let required = try await ok.receive()
            #expect(required["type"] == "auth_required")
            #expect(required["ha_version"]?.stringValue?.hasPrefix("pushrelay-") == true)
            ok.send(["type": "ping", "id": 1])
            // Nothing but auth before authentication: the connection is refused.
            #expect(try await ok.receive()["type"] == "auth_invalid")
            #expect(await ok.waitUntilClosed())

            let bad = WSTestClient.connect(port: s.port)
            _ = try await bad.receive()
            bad.send(["type": "auth", "access_token": "short"])
            let invalid = try await bad.receive()
            #expect(invalid["type"] == "auth_invalid")
            #expect(invalid["message"]?.stringValue?.isEmpty == false)
            #expect(await bad.waitUntilClosed())

            let good = WSTestClient.connect(port: s.port)
            _ = try await good.receive()
            good.send(["type": "auth", "access_token": .string(PushChannelRig.token)])
            #expect(try await good.receive()["type"] == "auth_ok")
            good.send(["type": "ping", "id": 5])
            #expect(try await good.receive() == ["id": 5, "type": "pong"])
        }
        // A server of its own whose timers run in simulated time: the timeout comes when the test says.
        let clock = ManualClock()
        try await TestServer.with(clock: clock, configure: { $0.channel.authTimeoutMs = 300 }) { (s: TestServer) async throws in
            let slow = WSTestClient.connect(port: s.port)
            _ = try await slow.receive()
            clock.advance(by: 0.299)
            #expect(slow.pendingFrames.isEmpty, "nothing before the timeout")
            clock.advance(by: 0.001)
            let timeout = try await slow.receive()
            #expect(timeout["type"] == "auth_invalid")
            #expect(timeout["message"]?.stringValue?.contains("timed out") == true)
            #expect(await slow.waitUntilClosed())
        }
    }

    @Test func failedAuthenticationsAreRateLimitedPerAddress() async throws {
        try await TestServer.with(configure: { $0.maxFailedAuthsPerMinute = 2 }) { (s: TestServer) async throws in
            for _ in 0..<2 {
                let c = WSTestClient.connect(port: s.port)
                _ = try await c.receive()
                c.send(["type": "auth", "access_token": "nope"])
                #expect(try await c.receive()["type"] == "auth_invalid")
            }
            // Even a valid credential is refused from this address for the rest of the minute.
            let c = WSTestClient.connect(port: s.port)
            _ = try await c.receive()
            c.send(["type": "auth", "access_token": .string(PushChannelRig.token)])
            #expect(try await c.receive()["type"] == "auth_invalid")
        }
    }

    @Test func localDeliveryWithConfirmUsesNoQuota() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, id: 7)
            let r = try await s.android(PushChannelRig.body())
            #expect(r.status == 201, "\(r.rawBody)")
            let messageID = try #require(r["messageId"]?.stringValue)
            #expect(messageID.hasPrefix("local:"))
            #expect(r.int("rateLimits", "attempts") == 0)
            let event = try await ws.receive()
            #expect(event["id"] == 7)
            #expect(event["type"] == "event")
            #expect(event["event"]?["message"] == "Hello")
            #expect(event["event"]?["data"] == ["tag": "t"])
            #expect(event["event"]?["push_token"] == nil, "push_token is not sent on the channel")
            let confirmID = try #require(event["event"]?["hass_confirm_id"]?.stringValue)
            #expect(messageID == "local:\(confirmID)")
            ws.send(["id": 8, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-1", "confirm_id": .string(confirmID)])
            #expect(try await ws.receive() == ["id": 8, "type": "result", "success": true, "result": .null])
            #expect(cloud.callCount == 0)
            let counts = try await SQLitePushChannelStore(database: s.database).counters(pushToken: PushChannelRig.token, day: UTCDay(s.clock.now()))
            #expect(counts.delivered == 1 && counts.fallbacks == 0)
            #expect(try await SQLitePushChannelStore(database: s.database).all().isEmpty, "a confirmed message is forgotten")
        }
    }

    @Test func aConnectedDeviceIsServedWhileItsCloudProviderIsAtItsInFlightBound() async throws {
        let gate = ScriptedProvider.Gate()
        let cloud = ScriptedProvider(name: "cloud", [.hold(gate)])
        try await TestServer.with(
            providers: ["cloud": cloud],
            configure: PushChannelRig.cloud(10_000) {
                $0.delivery.maxInFlight = 1
                $0.delivery.maxWaitMs = 200
            }
        ) {
            (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, supportConfirm: false)
            // Another device's notification takes the cloud provider's only place and holds it.
            async let held = s.android(PushChannelRig.body("held", token: "other-device:token", webhookID: "hook-2"))
            try await eventually("the cloud delivery starts") { cloud.callCount == 1 }
            // A device without a channel waits for the place and is refused; the connected one gets its notification.
            let refused = try await s.android(PushChannelRig.body("refused", token: "third-device:token", webhookID: "hook-3"))
            expectJSONError(refused, status: 503, errorType: "ProviderUnavailable")
            #expect(refused["errorCode"] == "ProviderBusy")
            let local = try await s.android(PushChannelRig.body("local"))
            #expect(local.status == 201, "\(local.rawBody)")
            #expect(local["messageId"]?.stringValue?.hasPrefix("local:") == true)
            #expect(try await ws.receive()["event"]?["message"] == "local")
            gate.open()
            #expect(try await held.status == 201)
            #expect(cloud.callCount == 1, "neither the refused nor the local notification reached the cloud")
        }
    }

    @Test func confirmTimeoutFallsBackOnceAndKeepsTheChannel() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let clock = ManualClock()
        try await TestServer.with(clock: clock, providers: ["cloud": cloud], configure: PushChannelRig.cloud(1_500)) { (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            _ = try await s.android(PushChannelRig.body("first"))
            let first = try await ws.receive()
            let lateID = try #require(first["event"]?["hass_confirm_id"]?.stringValue)
            // Just before the timeout nothing happens; at the timeout exactly that message goes to the cloud, counted
            // against the quota.
            clock.advance(by: 1.499)
            #expect(cloud.callCount == 0)
            clock.advance(by: 0.001)
            try await eventually("the unconfirmed message goes to the cloud") { cloud.callCount > 0 }
            #expect(cloud.callCount == 1)
            #expect(cloud.deliveries.first?.notification.fcmMessage["data"]?["message"] == "first")
            let check = try await s.post("/api/checkRateLimits", ["push_token": .string(PushChannelRig.token)])
            #expect(check.int("rateLimits", "successful") == 1)
            // The channel still delivers the next message.
            let r = try await s.android(PushChannelRig.body("second"))
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true)
            let second = try await ws.receive()
            #expect(second["event"]?["message"] == "second")
            // A late confirm gets not_found and nothing else happens.
            ws.send(["id": 2, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-1", "confirm_id": .string(lateID)])
            let late = try await ws.receive()
            #expect(late["success"] == false)
            #expect(late["error"]?["code"] == "not_found")
            ws.send([
                "id": 3, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-1",
                "confirm_id": second["event"]?["hass_confirm_id"] ?? .null,
            ])
            #expect(try await ws.receive()["success"] == true)
            // The confirmed message's timer is gone: nothing else can fall back.
            #expect(!clock.pendingDelays.contains(.milliseconds(1_500)))
            clock.advance(by: 10)
            #expect(cloud.callCount == 1)
        }
    }

    @Test func withoutConfirmItIsFireAndForget() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let clock = ManualClock()
        try await TestServer.with(clock: clock, providers: ["cloud": cloud], configure: PushChannelRig.cloud(200)) { (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, supportConfirm: false)
            let r = try await s.android(PushChannelRig.body())
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true)
            let event = try await ws.receive()
            #expect(event["event"]?["hass_confirm_id"] == nil)
            // No confirm timer was started, so nothing can fall back.
            #expect(!clock.pendingDelays.contains(.milliseconds(200)))
            clock.advance(by: 10)
            #expect(cloud.callCount == 0)
        }
    }

    @Test func disconnectSendsUnconfirmedMessagesToTheCloudAtOnce() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], configure: PushChannelRig.cloud(60_000)) { (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            _ = try await s.android(PushChannelRig.body("a"))
            _ = try await s.android(PushChannelRig.body("b"))
            _ = try await ws.receive()
            _ = try await ws.receive()
            ws.close()
            try await eventually("both unconfirmed messages go to the cloud") { cloud.callCount >= 2 }
            #expect(cloud.callCount == 2)
            // With the channel gone, the next notification takes the cloud route directly.
            let r = try await s.android(PushChannelRig.body("c"))
            #expect(r["messageId"]?.stringValue?.hasPrefix("cloud:") == true)
        }
    }

    @Test func aReplacementChannelGetsTheOldChannelsUnconfirmedMessages() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], configure: PushChannelRig.cloud(60_000)) { (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let old = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            _ = try await s.android(PushChannelRig.body("pending"))
            let sent = try await old.receive()
            let new = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, id: 3)
            let resent = try await new.receive()
            #expect(resent["id"] == 3)
            #expect(resent["event"]?["message"] == "pending")
            #expect(resent["event"]?["hass_confirm_id"] == sent["event"]?["hass_confirm_id"])
            // New notifications go to the new channel only.
            _ = try await s.android(PushChannelRig.body("next"))
            #expect(try await new.receive()["event"]?["message"] == "next")
            #expect(old.pendingFrames.isEmpty)
            #expect(cloud.callCount == 0)
        }
    }

    @Test func fallbackFalseKeepsMessagesQueuedForTheDevice() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let clock = ManualClock()
        try await TestServer.with(clock: clock, providers: ["cloud": cloud], configure: PushChannelRig.cloud(1_000)) { (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, fallback: false)
            _ = try await s.android(PushChannelRig.body("keep me"))
            _ = try await ws.receive()
            // No confirm: after the timeout the message goes back to the queue, not to the cloud.
            clock.advance(by: 1)
            let store = SQLitePushChannelStore(database: s.database)
            try await eventually("the message is queued again") { (try? await store.all().map(\.state)) == [.queued] }
            #expect(cloud.callCount == 0)
            let queued = try await store.all()
            #expect(queued.map(\.state) == [.queued])
            ws.close()
            _ = await ws.waitUntilClosed()
            let again = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, fallback: false)
            let replay = try await again.receive()
            #expect(replay["event"]?["message"] == "keep me")
            again.send([
                "id": 2, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-1",
                "confirm_id": replay["event"]?["hass_confirm_id"] ?? .null,
            ])
            #expect(try await again.receive()["success"] == true)
            #expect(try await SQLitePushChannelStore(database: s.database).all().isEmpty)
            #expect(cloud.callCount == 0)
        }
    }

    @Test func localOnlyAppsQueueWhileOffline() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            let r = try await s.android(PushChannelRig.body("while away", appID: "io.local.app"))
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r["messageId"]?.stringValue?.hasPrefix("queued:") == true)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, supportConfirm: false)
            let event = try await ws.receive()
            #expect(event["event"]?["message"] == "while away")
            try await eventually("the confirmed message leaves the store") {
                (try? await SQLitePushChannelStore(database: s.database).all().isEmpty) == true
            }
            #expect(try await SQLitePushChannelStore(database: s.database).all().isEmpty)
        }
    }

    @Test func queuedMessagesPastTheOfflineTTLAreDroppedAndCounted() async throws {
        let clock = ManualClock("2026-11-21T12:00:00Z", timers: .real)
        try await TestServer.with(clock: clock, configure: PushChannelRig.cloud(10_000) { $0.channel.offlineTTLms = 60_000 }) {
            (s: TestServer) async throws in
            _ = try await s.android(PushChannelRig.body("stale", appID: "io.local.app"))
            clock.advance(by: 61)
            let store = SQLitePushChannelStore(database: s.database)
            #expect(try await store.dropExpired(now: clock.now()) == 1)
            #expect(try await store.counters(pushToken: PushChannelRig.token, day: UTCDay(clock.now())).dropped == 1)
        }
    }

    @Test func aRestartLosesNoPendingMessage() async throws {
        let path = TestServer.tempPath()
        // A crash left one unconfirmed message (fallback on) and one queued message (fallback off).
        do {
            let db = try PushRelayDatabase(path: path)
            try db.migrate()
            let store = SQLitePushChannelStore(database: db)
            let n = try HANotification(body: PushChannelRig.body("unconfirmed before the crash"))
            try await store.save(
                PushChannelMessage(
                    id: "c1",
                    webhookID: "hook-1",
                    pushToken: PushChannelRig.token,
                    platform: .android,
                    notification: n.requestBody,
                    state: .unconfirmed,
                    fallback: true,
                    createdAt: Date(),
                    expiresAt: Date().addingTimeInterval(3600)
                )
            )
            let q = try HANotification(body: PushChannelRig.body("queued before the crash"))
            try await store.save(
                PushChannelMessage(
                    id: "q1",
                    webhookID: "hook-1",
                    pushToken: PushChannelRig.token,
                    platform: .android,
                    notification: q.requestBody,
                    state: .unconfirmed,
                    fallback: false,
                    createdAt: Date(),
                    expiresAt: Date().addingTimeInterval(3600)
                )
            )
            try db.close()
        }
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(dbPath: path, providers: ["cloud": cloud], configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            try await eventually("the message unconfirmed before the crash goes to the cloud") { cloud.callCount > 0 }
            #expect(cloud.callCount == 1)
            #expect(cloud.deliveries.first?.notification.fcmMessage["data"]?["message"] == "unconfirmed before the crash")
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            #expect(try await ws.receive()["event"]?["message"] == "queued before the crash")
        }
    }

    @Test func subscriptionsNeedALinkedCredential() async throws {
        try await TestServer.with(providers: ["cloud": ScriptedProvider(name: "cloud", [.deliver])], configure: PushChannelRig.cloud()) {
            (s: TestServer) async throws in
            let store = SQLitePushChannelStore(database: s.database)
            let (channelToken, id) = try await store.createToken(webhookID: "hook-A", label: "tablet")
            let c = WSTestClient.connect(port: s.port)
            _ = try await c.receive()
            c.send(["type": "auth", "access_token": .string(channelToken)])
            #expect(try await c.receive()["type"] == "auth_ok")
            c.send(["id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": "hook-B"])
            let denied = try await c.receive()
            #expect(denied["error"]?["code"] == "unauthorized")
            c.send(["id": 2, "type": "mobile_app/push_notification_channel", "webhook_id": "hook-A"])
            #expect(try await c.receive()["success"] == true)
            // Channel tokens receive every notification for their webhook id.
            _ = try await s.android(
                PushChannelRig.body("for A", token: "another-device-token:" + String(repeating: "y", count: 20), webhookID: "hook-A")
            )
            #expect(try await c.receive()["event"]?["message"] == "for A")
            // A push token seen with hook-1 may not subscribe to another webhook id.
            _ = try await s.android(PushChannelRig.body("seen", token: PushChannelRig.token + "-2", webhookID: "hook-1"))
            let p = WSTestClient.connect(port: s.port)
            _ = try await p.receive()
            p.send(["type": "auth", "access_token": .string(PushChannelRig.token + "-2")])
            _ = try await p.receive()
            p.send(["id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": "hook-A"])
            #expect(try await p.receive()["error"]?["code"] == "unauthorized")
            // A revoked channel token no longer authenticates.
            #expect(try await store.revokeToken(id: id))
            let r = WSTestClient.connect(port: s.port)
            _ = try await r.receive()
            r.send(["type": "auth", "access_token": .string(channelToken)])
            #expect(try await r.receive()["type"] == "auth_invalid")
        }
    }

    @Test func malformedFramesAndProtocolErrorsKeepTheConnection() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, id: 10)
            ws.sendRaw("{not json")
            #expect(try await ws.receive()["error"]?["code"] == "invalid_format")
            ws.sendRaw("[1,2]")
            #expect(try await ws.receive()["error"]?["code"] == "invalid_format")
            ws.send(["id": 11, "type": "mobile_app/push_notification_channel"])
            let missing = try await ws.receive()
            #expect(missing["id"] == 11 && missing["error"]?["code"] == "invalid_format")
            ws.send(["id": 12, "type": "get_states"])
            #expect(try await ws.receive()["error"]?["code"] == "unknown_command")
            ws.send(["id": 12, "type": "ping"])
            #expect(try await ws.receive()["error"]?["code"] == "id_reuse")
            ws.send(["id": 13, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-1", "confirm_id": "nope"])
            #expect(try await ws.receive()["error"]?["code"] == "not_found")
            ws.send(["id": 14, "type": "ping"])
            #expect(try await ws.receive() == ["id": 14, "type": "pong"])
            // unsubscribe_events ends the channel: notifications take the cloud route again.
            ws.send(["id": 15, "type": "unsubscribe_events", "subscription": 10])
            #expect(try await ws.receive()["success"] == true)
            ws.send(["id": 16, "type": "unsubscribe_events", "subscription": 10])
            #expect(try await ws.receive()["error"]?["code"] == "not_found")
        }
    }

    @Test func theChannelLimitIsEnforced() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud(10_000) { $0.channel.maxChannels = 1 }) { (s: TestServer) async throws in
            let first = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token, webhookID: "w1")
            let c = WSTestClient.connect(port: s.port)
            _ = try await c.receive()
            c.send(["type": "auth", "access_token": .string(PushChannelRig.token + "-other")])
            _ = try await c.receive()
            c.send(["id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": "w2"])
            let refused = try await c.receive()
            #expect(refused["error"]?["code"] == "too_many_channels")
            withExtendedLifetime(first) {}
        }
    }

    @Test func oversizedFramesCloseTheConnection() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud(10_000) { $0.channel.maxFrameBytes = 1024 }) { (s: TestServer) async throws in
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            ws.sendRaw(#"{"id": 2, "type": "ping", "pad": ""# + String(repeating: "x", count: 4096) + #""}"#)
            #expect(await ws.waitUntilClosed())
            // The server is fine: a new connection works.
            let again = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            again.send(["id": 2, "type": "ping"])
            #expect(try await again.receive() == ["id": 2, "type": "pong"])
        }
    }

    @Test func aSlowReaderOverflowsAndItsFramesFail() async throws {
        // A socket that takes the first frame and then blocks until released: a reader that stopped reading.
        let (started, startedSignal) = AsyncStream.makeStream(of: String.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let written = Locked<[String]>([])
        let closes = Locked<[String]>([])
        let sink = PushChannelConnection.Sink(
            write: { text in
                startedSignal.yield(text)
                if text == "first" { for await _ in release { break } }
                written.withLock { $0.append(text) }
            },
            close: { code, reason in closes.withLock { $0.append("\(code): \(reason)") } }
        )
        let connection = PushChannelConnection(peer: "test", bufferLimit: 2, sink: sink, logger: Logger(label: "test"))
        let failures = Locked(0)
        #expect(connection.send("first") { failures.withLock { $0 += 1 } })
        var it = started.makeAsyncIterator()
        #expect(await it.next() == "first")
        // The writer is stuck on "first": two more fit in the buffer, the next one overflows and fails.
        for text in ["a", "b"] { #expect(connection.send(text) { failures.withLock { $0 += 1 } }) }
        #expect(!connection.send("c") { failures.withLock { $0 += 1 } })
        #expect(connection.isClosed && connection.closeReason == .overflow)
        #expect(failures.withLock { $0 } == 1)
        #expect(!connection.send("d") { failures.withLock { $0 += 1 } })
        #expect(failures.withLock { $0 } == 2)
        // Once the socket moves again, what was queued goes out, then the close frame with its reason.
        releaseSignal.yield()
        await connection.finished()
        #expect(written.withLock { $0 } == ["first", "a", "b"])
        #expect(closes.withLock { $0 }.count == 1)
        #expect(closes.withLock { $0 }.first?.contains("outbound buffer full") == true)
    }

    @Test func aWriterStartsPerBurstAndAFailedWriteFailsTheRest() async throws {
        let attempts = Locked(0)
        let sink = PushChannelConnection.Sink(
            write: { _ in
                let n = attempts.withLock { a -> Int in
                    a += 1
                    return a
                }
                if n >= 2 { throw CancellationError() }
            },
            close: { _, _ in }
        )
        let connection = PushChannelConnection(peer: "test", bufferLimit: 8, sink: sink, logger: Logger(label: "test"))
        let failures = Locked(0)
        // The first frame is written and its writer ends; a later frame starts a new writer, whose write fails.
        #expect(connection.send("one") { failures.withLock { $0 += 1 } })
        try await eventually("the first frame is written") { attempts.withLock({ $0 }) >= 1 }
        #expect(attempts.withLock { $0 } == 1)
        #expect(connection.send("two") { failures.withLock { $0 += 1 } })
        await connection.finished()
        #expect(connection.closeReason == .writeFailed)
        #expect(attempts.withLock { $0 } == 2)
        #expect(failures.withLock { $0 } == 1)
        #expect(!connection.send("three") { failures.withLock { $0 += 1 } })
        #expect(failures.withLock { $0 } == 2)
    }
}
