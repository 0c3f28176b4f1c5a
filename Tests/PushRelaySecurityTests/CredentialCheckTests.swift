import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayServer

/// Every credential check, tried as an outsider would: guessing is limited per address (one budget for every kind of
/// credential), errors do not tell known tokens from unknown ones, and a client's mistake is never a 500.
@Suite struct CredentialCheckTests {
    static let adminToken = "s3cret-admin-token-123"
    static let yaml = "admin:\n  token: \"\(adminToken)\"\nsecurity:\n  max_failed_auths_per_minute: 3\nmetrics:\n  enabled: true\n"

    @Test func wrongAdminTokensAreLimitedPerAddress() async throws {
        try await TestServer.with(yaml: Self.yaml) { s in
            let good = [("Authorization", "Bearer \(Self.adminToken)")]
            #expect(try await s.request(.GET, "/admin/v1/quotas", headers: good).status == 200)
            for guess in ["Bearer wrong", "Bearer \(Self.adminToken)x", "Bearer \(Self.adminToken.dropLast())"] {
                expectJSONError(
                    try await s.request(.GET, "/admin/v1/quotas", headers: [("Authorization", guess)]),
                    status: 401,
                    errorType: "Unauthorized"
                )
            }
            // Blocked now: the right token is refused too, on the admin API and on /metrics, with a Retry-After.
            let blocked = try await s.request(.GET, "/admin/v1/quotas", headers: good)
            expectJSONError(blocked, status: 429, errorType: "TooManyFailedAttempts")
            #expect(blocked.headers["retry-after"] == "60")
            expectJSONError(try await s.request(.GET, "/metrics", headers: good), status: 429, errorType: "TooManyFailedAttempts")
            // A minute later the address may try again.
            s.clock.advance(by: 121)
            #expect(try await s.request(.GET, "/admin/v1/quotas", headers: good).status == 200)
        }
    }

    @Test func wrongAPIKeysAreLimitedPerAddress() async throws {
        try await TestServer.with(yaml: Self.yaml) { s in
            let key = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "test").key
            let call: JSONValue = ["device_id": "no-such-device", "caller_name": "Eve", "caller_id": "eve", "invite": "v=0"]
            // A valid key naming a device that does not exist, or belongs to another key: one 404, and no failure counted.
            for _ in 0..<4 {
                expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: key), status: 404, errorType: "UnknownDevice")
            }
            for guess in ["pk_guess", key + "x", String(key.dropLast())] {
                expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: guess), status: 401, errorType: "Unauthorized")
            }
            expectJSONError(try await s.bearerPost("/api/v1/calls", call, key: key), status: 429, errorType: "TooManyFailedAttempts")
            expectJSONError(
                try await s.bearerPost("/api/v1/devices", ["platform": "android", "app_id": "a", "push_token": "t"], key: key),
                status: 429,
                errorType: "TooManyFailedAttempts"
            )
        }
    }

    @Test func everyKindOfCredentialSharesOneBudget() async throws {
        try await TestServer.with(yaml: Self.yaml) { s in
            // One wrong admin token, one wrong API key, one failed websocket authentication: three failures.
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas", headers: [("Authorization", "Bearer nope")]), status: 401)
            expectJSONError(try await s.bearerPost("/api/v1/calls", ["device_id": "d"], key: "nope"), status: 401)
            let ws = WSTestClient.connect(port: s.port)
            _ = try await ws.receive()
            ws.send(["type": "auth", "access_token": "short"])
            #expect(try await ws.receive()["type"] == "auth_invalid")
            // So a websocket with a perfectly good push token is refused from this address.
            let device = WSTestClient.connect(port: s.port)
            _ = try await device.receive()
            device.send(["type": "auth", "access_token": .string("device-token:" + String(repeating: "z", count: 40))])
            let refused = try await device.receive()
            #expect(refused["type"] == "auth_invalid")
            #expect(refused["message"]?.stringValue?.contains("Too many failed") == true)
        }
    }

    @Test func checkRateLimitsTellsNothingAboutWhetherATokenIsKnown() async throws {
        try await TestServer.with(yaml: "quota:\n  daily_limit: 10\n") { s in
            let used = "used-yesterday-token:" + String(repeating: "u", count: 30)
            let never = "never-seen-token-xx:" + String(repeating: "n", count: 31)
            #expect(try await s.android(TestServer.haBody(token: used)).status == 201)
            s.clock.advance(by: 86_400)
            let a = try await s.post("/api/checkRateLimits", ["push_token": .string(used)])
            let b = try await s.post("/api/checkRateLimits", ["push_token": .string(never)])
            #expect(a.status == 200 && b.status == 200)
            // The same answer, but for the echoed target: a caller cannot tell a known token from a guess.
            #expect(a["rateLimits"] == b["rateLimits"])
            #expect(a["rateLimits"]?["successful"] == 0)
            #expect(Set(a.json.objectValue?.keys.map { $0 } ?? []) == ["rateLimits", "target"])
            // And asking is read-only: no row for the guessed token.
            let rows = try await s.database.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage WHERE push_token = ?", arguments: [never])
            }
            #expect(rows == 0)
        }
    }

    @Test func aMalformedAPNsTokenIsTheCallersMistake() async throws {
        // 36 hex digits: a UUID's worth, not an APNs device token.
        let malformed = String(repeating: "0a1b2c", count: 6)
        try await withRelayFakes(configure: { c in
            c.apps = [.init(match: "io.robbie.HomeAssistant*", provider: "apns"), .init(match: "*", provider: "fcm")]
        }) { s, env in
            let ha = try await s.ios(TestServer.haBody(token: malformed, appID: "io.robbie.HomeAssistant.dev"))
            expectJSONError(ha, status: 400, errorType: "MalformedToken")
            #expect(ha["message"]?.stringValue?.contains("36 hex digits") == true, "\(ha.rawBody)")
            let relay = try await s.rawPost("/relay-to/production/\(malformed)", body: [1, 2, 3], headers: [("Content-Encoding", "aes128gcm")])
            expectJSONError(relay, status: 400, errorType: "MalformedToken")
            #expect(env.apns.records.isEmpty, "nothing reached APNs")
        }
    }

    @Test func serverSideMisconfigurationSaysSo() async throws {
        try await TestServer.with(configure: { $0.apps = [.init(match: "io.only.this", provider: "sandbox")] }) { s in
            let r = try await s.android(TestServer.haBody(appID: "io.other.app"))
            expectJSONError(r, status: 500, errorType: "ConfigurationError")
            #expect(r["message"]?.stringValue?.hasPrefix("Server-side configuration problem") == true, "\(r.rawBody)")
        }
    }

    @Test func aChannelTokenChannelRingsOnlyForDevicesBoundToItsWebhook() async throws {
        try await withRelayFakes(configure: { $0.calls.channelConfirmTimeoutMs = 300 }) { s, env in
            let key = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "test").key
            let (channelToken, _) = try await SQLitePushChannelStore(database: s.database).createToken(webhookID: "victim-hook", label: "tablet")
            let tablet = WSTestClient.connect(port: s.port)
            _ = try await tablet.receive()
            tablet.send(["type": "auth", "access_token": .string(channelToken)])
            #expect(try await tablet.receive()["type"] == "auth_ok")
            tablet.send(["id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": "victim-hook", "support_confirm": true])
            #expect(try await tablet.receive()["success"] == true)
            // An API key holder registers a device naming someone else's webhook id: the call does not ring there.
            let r = try await s.bearerPost(
                "/api/v1/devices",
                [
                    "platform": "android", "app_id": "com.example.phone",
                    "push_token": "fcm:intruder", "webhook_id": "victim-hook",
                ],
                key: key
            )
            #expect(r.status == 201, "\(r.rawBody)")
            let device = try #require(r["device_id"]?.stringValue)
            let call = try await s.bearerPost(
                "/api/v1/calls",
                ["device_id": .string(device), "caller_name": "Eve", "caller_id": "eve", "invite": "v=0"],
                key: key
            )
            #expect(call["delivered_via"] == "fcm", "\(call.rawBody)")
            #expect(tablet.pendingFrames.isEmpty)
            #expect(env.fcm.records.count == 1)
        }
    }
}
