import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestSupport
import Testing

/// The holder of one API key, against devices another key registered: one test per row of "What an API-key holder
/// can do" in `docs/security.md`, on a real server on loopback with the fake APNs and FCM over TLS.
@Suite struct APIKeyHolderTests {
    static let hex = String(repeating: "7e57", count: 16)

    /// A server whose routes seal Home Assistant notifications, with the victim's Android and iOS devices registered
    /// under one key and a second key for the intruder.
    static func withVictim(
        _ body: @Sendable (TestServer, FakeProviderEnvironment, Victim) async throws -> Void
    ) async throws {
        try await withRelayFakes(configure: { c in
            c.apps = [
                .init(match: "io.robbie.HomeAssistant*", provider: "apns", encryptPayloads: true),
                .init(match: "*", provider: "fcm", encryptPayloads: true),
            ]
        }) { s, env in
            let key = try await CallEndToEndTests.apiKey(s)
            let victim = Victim(
                key: key,
                intruderKey: try await CallEndToEndTests.apiKey(s),
                android: try await CallEndToEndTests.register(s, key: key, platform: "android", pushToken: "fcm:victim"),
                ios: try await CallEndToEndTests.register(s, key: key, platform: "ios", pushToken: hex)
            )
            try await body(s, env, victim)
        }
    }

    struct Victim: Sendable {
        var key: String
        var intruderKey: String
        var android: (id: String, key: [UInt8])
        var ios: (id: String, key: [UInt8])
    }

    @Test func apiKeyHolderCannotTakeOverAnotherKeysDevice() async throws {
        try await Self.withVictim { s, env, victim in
            // The victim's push token, its APNs push token in upper case, its PushKit token in upper case: each one is
            // refused, and the answer carries no key.
            let attempts: [(JSONValue, String)] = [
                (["platform": "android", "app_id": "io.homeassistant.companion.android", "push_token": "fcm:victim"], "push_token"),
                (["platform": "ios", "app_id": "io.robbie.HomeAssistant", "push_token": .string(Self.hex.uppercased())], "push_token"),
                (
                    [
                        "platform": "ios", "app_id": "io.robbie.HomeAssistant", "push_token": .string(String(repeating: "1d", count: 32)),
                        "voip_token": .string(CallEndToEndTests.voipToken.uppercased()),
                    ],
                    "voip_token"
                ),
            ]
            for (body, field) in attempts {
                let r = try await s.bearerPost("/api/v1/devices", body, key: victim.intruderKey)
                expectJSONError(r, status: 409, errorType: "TokenHeldByAnotherKey")
                #expect(r["message"]?.stringValue?.contains(field) == true, "\(r.rawBody)")
                #expect(r["encryption_key"] == nil && r["device_id"] == nil)
            }
            // The intruder's key still registers its own devices.
            let own = try await s.bearerPost(
                "/api/v1/devices",
                ["platform": "android", "app_id": "a", "push_token": "fcm:own"],
                key: victim.intruderKey
            )
            #expect(own.status == 201)

            // Home Assistant's next notifications are sealed with the victim's keys.
            let a = try await s.android(TestServer.haBody(token: "fcm:victim", message: "Front door code is 4711"))
            #expect(a.status == 201, "\(a.rawBody)")
            let fcm = try #require(env.fcm.records.last?.body?["message"]?["data"])
            #expect(try CallEndToEndTests.openInvite(fcm, key: victim.android.key, field: "encrypted").contains("4711"))
            let i = try await s.ios(TestServer.haBody(token: Self.hex, message: "Alarm disarmed", appID: "io.robbie.HomeAssistant"))
            #expect(i.status == 201, "\(i.rawBody)")
            let apns = try #require(env.apns.records.last?.payload)
            #expect(try CallEndToEndTests.openInvite(apns, key: victim.ios.key, field: "encrypted").contains("Alarm disarmed"))
        }
    }

    @Test func apiKeyHolderCannotRingAnotherKeysDevice() async throws {
        try await Self.withVictim { s, env, victim in
            let voipPath = "/3/device/\(CallEndToEndTests.voipToken)"
            let call: JSONValue = ["device_id": .string(victim.ios.id), "caller_name": "Mallory", "caller_id": "m", "invite": "sdp"]
            expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: victim.intruderKey), status: 404, errorType: "UnknownDevice")
            // Nor through a device of its own with the victim's PushKit token.
            let own: JSONValue = [
                "platform": "ios", "app_id": "io.robbie.HomeAssistant", "push_token": .string(String(repeating: "2e", count: 32)),
                "voip_token": .string(CallEndToEndTests.voipToken),
            ]
            expectJSONError(try await s.bearerPost("/api/v1/devices", own, key: victim.intruderKey), status: 409, errorType: "TokenHeldByAnotherKey")
            #expect(env.apns.records.allSatisfy { $0.path != voipPath })

            // The victim's own key still rings it.
            #expect(try await s.bearerPost("/api/v1/calls", call, key: victim.key).status == 201)
            #expect(env.apns.records.filter { $0.path == voipPath }.count == 1)
        }
    }
}
