import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayServer

/// What a stranger can make the server store, each bounded: the length of every stored field a caller supplies
/// (refused before anything is written), the messages stored for a device whatever asked for them, and one daily
/// limit per Matrix device whatever app id it is listed under. Real servers on loopback, real SQLite files.
///
/// Load: many posts with fields at and past their limits, each answer held to a 10 s client limit.
@Suite struct StrangerStorageBoundsTests {
    static let token = "device-push-token:" + String(repeating: "d", count: 60)

    /// A Home Assistant body for a cloud app, with `change` applied.
    static func body(_ change: (inout [String: JSONValue]) -> Void = { _ in }) -> JSONValue {
        var o = PushChannelRig.body("hello", token: token, webhookID: "hook-1").objectValue!
        change(&o)
        return .object(o)
    }

    static func registration(appID: String = "io.homeassistant.companion.android", webhookID: String = "hook-1") -> JSONValue {
        ["app_id": .string(appID), "webhook_id": .string(webhookID)]
    }

    /// Every table a refused notification could have reached is as it was: no usage row, no delivery-log row, no
    /// channel message, no binding.
    static func expectNothingStored(_ s: TestServer, tokens: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await s.storage.admin.list(day: UTCDay(s.clock.now()), top: nil).isEmpty, sourceLocation: sourceLocation)
        #expect(try await s.storage.deliveries.recentDeliveries(pushToken: nil, limit: 10).isEmpty, sourceLocation: sourceLocation)
        #expect(try await s.storage.pushChannel.all().isEmpty, sourceLocation: sourceLocation)
        for token in tokens {
            #expect(try await s.storage.pushChannel.binding(pushToken: token) == nil, sourceLocation: sourceLocation)
        }
    }

    // MARK: Field lengths

    @Test func homeAssistantFieldsPastTheirBoundAreRefusedBeforeAnythingIsWritten() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        try await TestServer.with(providers: ["cloud": cloud], configure: PushChannelRig.cloud()) { s in
            let longToken = String(repeating: "t", count: FieldLimits.token + 1)
            let cases: [(field: String, limit: Int, body: JSONValue)] = [
                ("push_token", FieldLimits.token, Self.body { $0["push_token"] = .string(longToken) }),
                ("live_activity_token", FieldLimits.token, Self.body { $0["live_activity_token"] = .string(longToken) }),
                (
                    "registration_info.webhook_id", FieldLimits.identifier,
                    Self.body { $0["registration_info"] = Self.registration(webhookID: String(repeating: "w", count: FieldLimits.identifier + 1)) }
                ),
                (
                    "registration_info.app_id", FieldLimits.identifier,
                    Self.body { $0["registration_info"] = Self.registration(appID: String(repeating: "a", count: FieldLimits.identifier + 1)) }
                ),
                ("title", FieldLimits.title, Self.body { $0["title"] = .string(String(repeating: "T", count: FieldLimits.title + 1)) }),
            ]
            for (field, limit, body) in cases {
                for r in [try await s.android(body), try await s.ios(body)] {
                    expectJSONError(r, status: 400, errorType: "InvalidRequest")
                    let message = r["message"]?.stringValue ?? ""
                    #expect(message.contains("'\(field)'") && message.contains("at most \(limit) bytes"), "\(field): \(message)")
                }
            }
            // A local-only app's notification is refused the same way, before the queue.
            let local = Self.body {
                $0["push_token"] = .string(longToken)
                $0["registration_info"] = Self.registration(appID: "io.local.app")
            }
            expectJSONError(try await s.android(local), status: 400, errorType: "InvalidRequest")
            #expect(cloud.callCount == 0)
            try await Self.expectNothingStored(s, tokens: [longToken, Self.token])

            // At the bound: taken, counted and stored as usual.
            let atBound = String(repeating: "t", count: FieldLimits.token)
            let r = try await s.android(Self.body { $0["push_token"] = .string(atBound) })
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(try await s.storage.admin.list(day: UTCDay(s.clock.now()), top: nil).map(\.pushToken) == [atBound])
        }
    }

    @Test func matrixFieldsPastTheirBoundAreRefusedBeforeAnythingIsWritten() async throws {
        try await withMatrix(configure: { c in c.matrix.apps = MatrixFakes.apps(dailyLimit: 5) }) { s, fakes in
            let cases: [(field: String, limit: Int, notification: [String: JSONValue], devices: [JSONValue])] = [
                (
                    "notification.devices[0].pushkey", FieldLimits.token, message,
                    [device(MatrixFakes.fcmApp, String(repeating: "k", count: FieldLimits.token + 1))]
                ),
                (
                    "notification.devices[1].app_id", FieldLimits.identifier, message,
                    [device(MatrixFakes.fcmApp, "fcm-ok"), device("im.glob." + String(repeating: "a", count: FieldLimits.identifier), "fcm-ok")]
                ),
                (
                    "notification.event_id", FieldLimits.identifier,
                    message.merging(["event_id": .string("$" + String(repeating: "e", count: FieldLimits.identifier))]) { _, new in new },
                    [device(MatrixFakes.fcmApp, "fcm-ok")]
                ),
            ]
            for (field, limit, notification, devices) in cases {
                let r = try await s.notify(notification, devices: devices)
                expectMatrixError(r, status: 400, errcode: "M_BAD_JSON")
                let text = r["error"]?.stringValue ?? ""
                #expect(text.contains("'\(field)'") && text.contains("at most \(limit) bytes"), "\(field): \(text)")
            }
            #expect(fakes.env.fcm.records.isEmpty)
            #expect(try await s.storage.admin.list(day: UTCDay(s.clock.now()), top: nil).isEmpty)
            #expect(try await s.storage.deliveries.recentDeliveries(pushToken: nil, limit: 10).isEmpty)
            #expect(try await s.storage.matrix.queuedCount() == 0)
            // No de-duplication claim was written: the event is new to the device.
            let seen = try await s.storage.matrix.lookup(
                eventID: "$ev1",
                pushkeys: ["fcm-ok"],
                deadKeys: [],
                since: .distantPast,
                now: s.clock.now()
            )
            #expect(seen.seen.isEmpty)
        }
    }

    // MARK: Matrix quota

    @Test func oneMatrixPushkeyHasOneDailyLimitWhateverItsAppID() async throws {
        try await withMatrix(configure: { c in
            c.matrix.apps["im.glob.*"] = .init(provider: "fcm", format: .fcm(.init()), dailyLimit: 2)
        }) { s, fakes in
            // Eight app ids of one glob entry, in one notify: one device, pushed at most twice today.
            let devices = (0..<8).map { device("im.glob.app\($0)", "one-device") }
            let first = try await s.notify(message, devices: devices)
            #expect(first.status == 200, "\(first.rawBody)")
            #expect(fakes.env.fcm.records.filter { $0.token == "one-device" }.count == 2, "eight app ids, a daily limit of 2")
            // And in notifies of their own, each under another app id.
            for i in 0..<4 {
                var n = message
                n["event_id"] = .string("$later-\(i)")
                let r = try await s.notify(n, devices: [device("im.glob.other\(i)", "one-device")])
                #expect(r.status == 200, "\(r.rawBody)")
            }
            #expect(fakes.env.fcm.records.filter { $0.token == "one-device" }.count == 2)
            let rows = try await s.storage.admin.list(day: UTCDay(s.clock.now()), top: nil)
            #expect(rows.map(\.pushToken) == ["matrix:one-device"], "one quota row for the device")
            #expect(rows.first?.successful == 2)
        }
    }

    // MARK: The Matrix retry queue

    @Test func theMatrixRetryQueueStoresOnlyWhatItWillSend() async throws {
        try await withMatrix { s, fakes in
            fakes.env.fcm.script("fcm-busy", [.unavailable(retryAfter: nil)])
            var n = message
            n["content"] = [
                "msgtype": "m.text", "body": .string(String(repeating: "b", count: 100_000)),
                "junk": ["x": .string(String(repeating: "j", count: 20_000))],
            ]
            n["room_name"] = .string(String(repeating: "r", count: 40_000))
            let busy = device(MatrixFakes.fcmApp, "fcm-busy", data: ["format": "full", "junk": .string(String(repeating: "d", count: 20_000))])
            let r = try await s.notify(n, devices: [busy, device(MatrixFakes.fcmApp, "fcm-ok")])
            #expect(r.status == 200, "\(r.rawBody)")
            let queued = try await s.storage.matrix.queued()
            #expect(queued.map(\.pushkey) == ["fcm-busy"])
            let stored = try #require(queued.first?.notification)
            #expect(stored.utf8.count < 3 * MatrixNotification.retryFieldBytes, "\(stored.utf8.count) bytes stored for a 180 KB notification")
            // What the retry sends is what the first attempt sent.
            let sent = try #require(fakes.env.fcm.records.first { $0.token == "fcm-ok" }?.body)
            let again = try MatrixNotification(body: JSONParser.parse(Array(stored.utf8)))
            guard case .send(let translated, _) = MatrixFCMTranslation.translate(again, device: again.devices[0]) else {
                Issue.record("the stored notification does not translate")
                return
            }
            #expect(translated.fcmMessage["data"]?["content_body"] == sent["message"]?["data"]?["content_body"])
            #expect(translated.fcmMessage["data"]?["room_name"] == sent["message"]?["data"]?["room_name"])
        }
    }

    // MARK: Messages stored for a device

    @Test func aNoFallbackChannelsMessagesGoUnderThePerTokenBound() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let configure = PushChannelRig.cloud { $0.channel.maxQueuedPerToken = 3 }
        try await TestServer.with(providers: ["cloud": cloud], configure: configure) { s in
            // Home Assistant pairs the device, which then subscribes asking for no fallback and never confirms.
            #expect(try await s.android(Self.body()).status == 201)
            let calls = cloud.callCount
            let ws = try await WSTestClient.subscribed(port: s.port, token: Self.token, webhookID: "hook-1", fallback: false)
            var ids: [String] = []
            for i in 1...5 {
                let r = try await s.android(Self.body { $0["message"] = .string("kept \(i)") })
                #expect(r.status == 201, "\(r.rawBody)")
                ids.append(r["messageId"]?.stringValue ?? "?")
            }
            // Three stay stored for the device; past its bound the notifications take the cloud route.
            #expect(ids.prefix(3).allSatisfy { $0.hasPrefix("local:") }, "\(ids)")
            #expect(!ids.suffix(2).contains { $0.hasPrefix("local:") }, "\(ids)")
            #expect(cloud.callCount == calls + 2)
            #expect(try await s.storage.pushChannel.storedCount(pushToken: Self.token) == 3)
            // The device's local-only notifications find the same bound.
            let local = Self.body { $0["registration_info"] = Self.registration(appID: "io.local.app") }
            ws.close()
            _ = await ws.waitUntilClosed()
            expectJSONError(try await s.android(local), status: 429, errorType: "DeviceQueueFull")
            #expect(try await s.storage.pushChannel.storedCount(pushToken: Self.token) == 3)
        }
    }

    @Test func aNoFallbackChannelsMessagesGoUnderTheTotalBound() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let configure = PushChannelRig.cloud { $0.channel.maxQueuedBytes = 16_384 }
        try await TestServer.with(providers: ["cloud": cloud], configure: configure) { s in
            #expect(try await s.android(Self.body()).status == 201)
            let ws = try await WSTestClient.subscribed(port: s.port, token: Self.token, webhookID: "hook-1", fallback: false)
            var ids: [String] = []
            for i in 1...5 {
                let r = try await s.android(
                    Self.body {
                        $0["message"] = .string("big \(i)")
                        $0["data"] = ["pad": .string(String(repeating: "p", count: 5_000))]
                    }
                )
                #expect(r.status == 201, "\(r.rawBody)")
                ids.append(r["messageId"]?.stringValue ?? "?")
                // The device reads each event (its channel stays open) but confirms none.
                if ids.last?.hasPrefix("local:") == true { #expect(try await ws.receive()["event"]?["message"] == .string("big \(i)")) }
            }
            #expect(ids.prefix(3).allSatisfy { $0.hasPrefix("local:") }, "\(ids)")
            #expect(!ids.suffix(2).contains { $0.hasPrefix("local:") }, "\(ids)")
            #expect(try await s.storage.pushChannel.storedBytes() < 16_384)
            withExtendedLifetime(ws) {}
        }
    }
}
