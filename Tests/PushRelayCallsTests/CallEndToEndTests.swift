import Crypto
import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestSupport
import Testing

/// API keys, device registration and call-invite pushes to the fake APNs (VoIP) and FCM.
@Suite struct CallEndToEndTests {
    static let voipToken = String(repeating: "5eed", count: 16)
    static let invite = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"

    static func apiKey(_ s: TestServer) async throws -> String {
        try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "test").key
    }

    static func register(
        _ s: TestServer,
        key: String,
        platform: String = "ios",
        pushToken: String = "apns-or-fcm-token"
    ) async throws -> (id: String, key: [UInt8]) {
        var body: [String: JSONValue] = [
            "platform": .string(platform), "app_id": "com.example.phone", "push_token": .string(pushToken), "label": "phone",
        ]
        if platform == "ios" { body["voip_token"] = .string(voipToken) }
        let r = try await s.bearerPost("/api/v1/devices", .object(body), key: key)
        #expect(r.status == 201, "\(r.rawBody)")
        #expect(r["encryption_type"] == "aes_256_gcm")
        let k = try #require(Data(base64Encoded: r["encryption_key"]?.stringValue ?? ""))
        #expect(k.count == 32)
        return (try #require(r["device_id"]?.stringValue), Array(k))
    }

    /// Opens the invite the way an app would: base64 → AES-256-GCM → zlib (stored blocks here; Python checks real zlib).
    static func openInvite(_ payload: JSONValue, key: [UInt8], field: String = "invite") throws -> String {
        func b64(_ k: String) throws -> Data { try #require(Data(base64Encoded: payload[k]?.stringValue ?? "")) }
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: b64("iv")), ciphertext: b64(field), tag: b64("tag"))
        let zlib = try AES.GCM.open(box, using: SymmetricKey(data: key))
        let plain = try #require(CallInvitePayloadReader.inflateStored(Array(zlib)))
        return String(decoding: plain, as: UTF8.self)
    }

    @Test func iosCallIsAVoIPPushWithAnEncryptedInvite() async throws {
        try await withRelayFakes { s, env in
            let key = try await Self.apiKey(s)
            let device = try await Self.register(s, key: key)
            let r = try await s.bearerPost(
                "/api/v1/calls",
                [
                    "device_id": .string(device.id), "caller_name": "Alice", "caller_id": "+15550001", "title": "Work", "with_video": true,
                    "invite": .string(Self.invite),
                ],
                key: key
            )
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r["delivered_via"] == "apns")
            let rec = try #require(env.apns.records.first)
            #expect(rec.status == 200)
            #expect(rec.path == "/3/device/\(Self.voipToken)")
            #expect(rec.headers["apns-topic"] == env.bundleID + ".voip")
            #expect(rec.headers["apns-push-type"] == "voip")
            #expect(rec.headers["apns-priority"] == "10")
            #expect(rec.headers["apns-expiration"] == "0")
            let alert = try #require(rec.payload?["aps"]?["alert"])
            #expect(alert["notification_uuid"] == r["notification_uuid"])
            #expect(alert["type"] == "call_invite")
            #expect(alert["with_video"] == "true")
            #expect(alert["incoming_caller_name"] == "Alice")
            #expect(alert["incoming_caller_id"] == "+15550001")
            #expect(alert["title"] == "Work")
            #expect(alert["encryption_type"] == "aes_256_gcm")
            #expect(alert["version"] == "1")
            #expect(try Self.openInvite(alert, key: device.key) == Self.invite)
            let wire = String(decoding: rec.request.body, as: UTF8.self)
            #expect(wire.range(of: "IN IP4") == nil, "the invite never travels in clear")
        }
    }

    @Test func androidCallIsHighPriorityFCMWithThePayloadAsBody() async throws {
        try await withRelayFakes { s, env in
            let key = try await Self.apiKey(s)
            let device = try await Self.register(s, key: key, platform: "android", pushToken: "fcm:phone")
            let r = try await s.bearerPost(
                "/api/v1/calls",
                [
                    "device_id": .string(device.id), "caller_name": "Bob", "caller_id": "bob", "with_video": false, "invite": .string(Self.invite),
                ],
                key: key
            )
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r["delivered_via"] == "fcm")
            let m = try #require(env.fcm.records.first?.body?["message"])
            #expect(m["token"] == "fcm:phone")
            #expect(m["android"]?["priority"] == "high")
            #expect(m["data"] == .object([:]))
            let payload = try JSONParser.parse(Array((m["notification"]?["body"]?.stringValue ?? "").utf8))
            #expect(payload["with_video"] == "false")
            #expect(payload["title"] == "Bob")
            #expect(try Self.openInvite(payload, key: device.key) == Self.invite)
        }
    }

    @Test func aLiveChannelGetsTheInviteInsteadOfAPush() async throws {
        let clock = ManualClock(Date())
        try await withRelayFakes(clock: clock, configure: { $0.calls.channelConfirmTimeoutMs = 2000 }) { s, env in
            let key = try await Self.apiKey(s)
            let token = "call-channel-token:" + String(repeating: "y", count: 40)
            let device = try await Self.register(s, key: key, platform: "android", pushToken: token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: token, id: 7)
            let call: JSONValue = ["device_id": .string(device.id), "caller_name": "Alice", "caller_id": "alice", "invite": .string(Self.invite)]

            async let confirmed = s.bearerPost("/api/v1/calls", call, key: key)
            let event = try await ws.receive()
            #expect(event["id"] == 7)
            #expect(event["event"]?["type"] == "call_invite")
            #expect(event["event"]?["incoming_caller_name"] == "Alice")
            #expect(try Self.openInvite(event["event"] ?? .null, key: device.key) == Self.invite)
            let confirmID = try #require(event["event"]?["hass_confirm_id"]?.stringValue)
            ws.send(["id": 8, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-1", "confirm_id": .string(confirmID)])
            #expect(try await ws.receive()["success"] == true)
            let r = try await confirmed
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r["delivered_via"] == "websocket")
            #expect(env.fcm.records.isEmpty)

            // Not confirmed in time: the push goes out after all.
            async let unconfirmed = s.bearerPost("/api/v1/calls", call, key: key)
            #expect(try await ws.receive()["event"]?["type"] == "call_invite")
            clock.advance(by: 1.999)
            #expect(env.fcm.records.isEmpty)
            clock.advance(by: 0.001)
            let r2 = try await unconfirmed
            #expect(r2.status == 201, "\(r2.rawBody)")
            #expect(r2["delivered_via"] == "fcm")
            #expect(env.fcm.records.count == 1)
        }
    }

    @Test func encryptedHomeAssistantNotifications() async throws {
        try await withRelayFakes(configure: { c in
            c.apps = [
                .init(match: "io.robbie.HomeAssistant*", provider: "apns", encryptPayloads: true),
                .init(match: "*", provider: "fcm", encryptPayloads: true),
            ]
        }) { s, env in
            let key = try await Self.apiKey(s)
            let android = try await Self.register(s, key: key, platform: "android", pushToken: "fcm:ha-sealed")
            let r = try await s.android(
                TestServer.haBody(token: "fcm:ha-sealed", message: "Front door open", title: "Security", data: ["tag": "door"])
            )
            #expect(r.status == 201, "\(r.rawBody)")
            let m = try #require(env.fcm.records.first?.body?["message"])
            #expect(m["data"]?["encryption_type"] == "aes_256_gcm")
            #expect(m["data"]?["message"] == nil)
            let data = try JSONParser.parse(Array(try Self.openInvite(m["data"] ?? .null, key: android.key, field: "encrypted").utf8))
            #expect(data == ["message": "Front door open", "title": "Security", "tag": "door", "webhook_id": "hook-1"])

            let hex = String(repeating: "0a1b", count: 16)
            let ios = try await Self.register(s, key: key, platform: "ios", pushToken: hex)
            let i = try await s.ios(TestServer.haBody(token: hex, message: "Alarm armed", title: "Home", appID: "io.robbie.HomeAssistant"))
            #expect(i.status == 201, "\(i.rawBody)")
            let rec = try #require(env.apns.records.first)
            #expect(rec.payload?["aps"] == ["alert": ["body": "New notification"], "mutable-content": 1, "sound": "default"])
            #expect(String(decoding: rec.request.body, as: UTF8.self).range(of: "Alarm") == nil)
            let payload = try JSONParser.parse(Array(try Self.openInvite(rec.payload ?? .null, key: ios.key, field: "encrypted").utf8))
            #expect(payload["aps"]?["alert"] == ["title": "Home", "body": "Alarm armed"])
            #expect(payload["webhook_id"] == "hook-1")

            // Tokens without a registered device are sent as usual.
            #expect(try await s.android(TestServer.haBody(token: "fcm:other", message: "Plain")).status == 201)
            #expect(env.fcm.records.last?.body?["message"]?["data"]?["message"] == "Plain")
        }
    }

    @Test func apiKeysDevicesAndErrors() async throws {
        try await withRelayFakes { s, env in
            let key = try await Self.apiKey(s)
            let other = try await Self.apiKey(s)
            let body: JSONValue = ["platform": "android", "app_id": "a", "push_token": "t"]
            expectJSONError(try await s.bearerPost("/api/v1/devices", body, key: nil), status: 401, errorType: "Unauthorized")
            expectJSONError(try await s.bearerPost("/api/v1/devices", body, key: "prk_wrong"), status: 401)
            expectJSONError(try await s.bearerPost("/api/v1/devices", ["platform": "web", "app_id": "a", "push_token": "t"], key: key), status: 400)
            expectJSONError(
                try await s.bearerPost("/api/v1/devices", ["platform": "ios", "app_id": "a", "push_token": "t", "voip_token": "nothex"], key: key),
                status: 400
            )
            // An iOS device without a PushKit token can get encrypted notifications but no calls.
            let plain = try await s.bearerPost("/api/v1/devices", ["platform": "ios", "app_id": "a", "push_token": "t"], key: key)
            #expect(plain.status == 201)
            expectJSONError(
                try await s.bearerPost(
                    "/api/v1/calls",
                    ["device_id": plain["device_id"] ?? .null, "caller_name": "C", "caller_id": "c", "invite": "i"],
                    key: key
                ),
                status: 422,
                errorType: "NoVoIPToken"
            )
            expectJSONError(try await s.bearerPost("/api/v1/devices", ["platform": "android", "app_id": "a"], key: key), status: 400)

            let device = try await Self.register(s, key: key, platform: "android", pushToken: "fcm:x")
            let call: JSONValue = ["device_id": .string(device.id), "caller_name": "C", "caller_id": "c", "invite": "sdp"]
            // Devices are private to the key that registered them.
            expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: other), status: 404, errorType: "UnknownDevice")
            expectJSONError(
                try await s.bearerPost("/api/v1/calls", ["device_id": "nope", "caller_name": "C", "caller_id": "c", "invite": "i"], key: key),
                status: 404
            )
            expectJSONError(
                try await s.bearerPost("/api/v1/calls", ["device_id": .string(device.id), "caller_name": "C", "caller_id": "c"], key: key),
                status: 400
            )
            expectJSONError(try await s.bearerPost("/api/v1/calls", call.merging(["with_video": 3]), key: key), status: 400)

            // Rotation: a new key, and the next invite is sealed with it.
            let rotated = try await s.bearerPost("/api/v1/devices/\(device.id)/rotate-key", .object([:]), key: key)
            #expect(rotated.status == 200, "\(rotated.rawBody)")
            let newKey = Array(try #require(Data(base64Encoded: rotated["encryption_key"]?.stringValue ?? "")))
            #expect(newKey.count == 32 && newKey != device.key)
            #expect(try await s.bearerPost("/api/v1/calls", call, key: key).status == 201)
            let payload = try JSONParser.parse(Array((env.fcm.records.last?.body?["message"]?["notification"]?["body"]?.stringValue ?? "").utf8))
            #expect(try Self.openInvite(payload, key: newKey) == "sdp")

            // Too large for the provider once encrypted and encoded.
            let huge = String(repeating: "a", count: 5000)
            let tooLarge = try await s.bearerPost("/api/v1/calls", call.merging(["invite": .string(huge)]), key: key)
            expectJSONError(tooLarge, status: 413)
            #expect(tooLarge["message"]?.stringValue?.contains("invite") == true && tooLarge["message"]?.stringValue?.contains("WebPush") == false)

            // Invalid token: 410, the token is remembered dead by the delivery pipeline (the one dead-token memory every
            // entry point reads) and the provider is not asked again.
            env.fcm.script("fcm:x", [.unregistered])
            expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: key), status: 410, errorType: "InvalidToken")
            #expect(try await SQLiteDeliveryLog(database: s.database).deadToken("fcm:x", now: s.clock.now())?.reason == "UNREGISTERED")
            let sent = env.fcm.records.count
            expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: key), status: 410)
            #expect(env.fcm.records.count == sent)

            // Delete, then it is unknown; revoked keys are refused.
            #expect(try await s.request(.DELETE, "/api/v1/devices/\(device.id)", headers: [("Authorization", "Bearer \(key)")]).status == 200)
            expectJSONError(try await s.request(.DELETE, "/api/v1/devices/\(device.id)", headers: [("Authorization", "Bearer \(key)")]), status: 404)
            let store = SQLiteDeviceStore(database: s.database)
            let id = try #require(try await store.listAPIKeys().first?.id)
            #expect(try await store.revokeAPIKey(id: id))
            expectJSONError(try await s.bearerPost("/api/v1/devices", body, key: key), status: 401)
        }
    }
}

extension JSONValue {
    func merging(_ other: [String: JSONValue]) -> JSONValue {
        guard case .object(var o) = self else { return self }
        for (k, v) in other { o[k] = v }
        return .object(o)
    }
}

/// A reader for zlib streams of stored blocks (the writer's format), for tests only.
enum CallInvitePayloadReader {
    static func inflateStored(_ z: [UInt8]) -> [UInt8]? {
        guard z.count >= 6, z[0] == 0x78, (UInt16(z[0]) << 8 | UInt16(z[1])) % 31 == 0 else { return nil }
        var i = 2
        var out: [UInt8] = []
        while true {
            guard i + 5 <= z.count, z[i] & 0x06 == 0 else { return nil }
            let final = z[i] & 1 == 1
            let len = Int(z[i + 1]) | Int(z[i + 2]) << 8
            guard i + 5 + len <= z.count else { return nil }
            out.append(contentsOf: z[(i + 5)..<(i + 5 + len)])
            i += 5 + len
            if final { break }
        }
        guard i + 4 == z.count else { return nil }
        let a = UInt32(z[i]) << 24 | UInt32(z[i + 1]) << 16 | UInt32(z[i + 2]) << 8 | UInt32(z[i + 3])
        return a == ZlibStored.adler32(out) ? out : nil
    }
}
