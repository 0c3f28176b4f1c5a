import Crypto
import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelaySQLite
import PushRelayServer
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import PushRelayWebPush
import Testing

/// The fakes a Matrix test talks to: FCM and APNs (`FakeProviderEnvironment`) and a WebPush service, sharing a CA.
package struct MatrixFakes: Sendable {
    package let env: FakeProviderEnvironment
    package let web: FakeWebPush
    package let vapidKeyFile: String
    package let vapidPublicKey: P256.Signing.PublicKey

    package static let fcmApp = "im.example.android"
    package static let apnsApp = "im.example.ios"
    package static let webApp = "im.example.web"
    /// A 32-byte APNs device token as a base64 pushkey, and its hex form.
    package static let apnsPushkey = Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
    package static let apnsHex = (0..<32).map { String(format: "%02x", UInt8($0 * 7 % 256)) }.joined()

    package func providers() -> [String: PushRelayConfig.ProviderConfig] {
        [
            "fcm": .init(name: "fcm", type: "fcm", options: env.fcmOptions),
            "apns": .init(name: "apns", type: "apns", options: env.apnsOptions),
            "web": .init(
                name: "web",
                type: "webpush",
                options: [
                    "vapid_private_key": .string(vapidKeyFile), "vapid_contact_email": "ops@example.org",
                    "allowed_endpoints": ["127.0.0.1:*"], "ca_file": .string(env.caFile),
                    // The fake push service is on loopback, which only an explicit allowance lets PushRelay contact.
                    "allowed_private_networks": ["127.0.0.1/32"],
                ]
            ),
        ]
    }

    package static func apps(dailyLimit: Int? = nil) -> [String: PushRelayConfig.MatrixApp] {
        [
            fcmApp: .init(provider: "fcm", format: .fcm(.init()), dailyLimit: dailyLimit),
            apnsApp: .init(provider: "apns", format: .apns(.init())),
            webApp: .init(provider: "web", format: .webPush),
            "im.glob.*": .init(provider: "fcm", format: .fcm(.init())),
            "*.ambiguous": .init(provider: "fcm", format: .fcm(.init())),
        ]
    }
}

/// Runs `body` against fresh fakes and a PushRelay whose `matrix` section is set by `configure`.
package func withMatrix(
    dbPath: String = TestServer.tempPath(),
    configure: @escaping @Sendable (inout PushRelayConfig) -> Void = { _ in },
    _ body: @Sendable (TestServer, MatrixFakes) async throws -> Void
) async throws {
    let dir = URL(fileURLWithPath: dbPath).deletingLastPathComponent().path
    // One clock for PushRelay and the fakes, so moving it keeps OAuth and JWT times consistent.
    let clock = ManualClock("2026-11-21T12:00:00Z", timers: .real)
    let env = try await FakeProviderEnvironment.start(directory: dir, clock: clock)
    let (key, pem) = VAPIDKey.generate()
    let keyFile = dir + "/vapid.pem"
    try pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
    let web = FakeWebPush(authority: env.authority, vapidPublicKey: key.publicKey, clock: clock)
    try await web.start()
    let fakes = MatrixFakes(env: env, web: web, vapidKeyFile: keyFile, vapidPublicKey: key.publicKey)
    do {
        try await TestServer.with(
            clock: clock,
            dbPath: dbPath,
            configure: { c in
                c.providers = fakes.providers()
                c.apps = [.init(match: "*", provider: "fcm")]
                c.delivery.retryBaseMs = 5
                c.delivery.maxAttempts = 1
                c.matrix.apps = MatrixFakes.apps()
                c.matrix.retry.pollIntervalMs = 3_600_000
                configure(&c)
            }
        ) { s in try await body(s, fakes) }
    } catch {
        await env.shutdown()
        await web.shutdown()
        throw error
    }
    await env.shutdown()
    await web.shutdown()
}

extension TestServer {
    package func notify(_ notification: [String: JSONValue], devices: [JSONValue]) async throws -> HTTPReply {
        var n = notification
        n["devices"] = .array(devices)
        return try await post("/_matrix/push/v1/notify", ["notification": .object(n)])
    }
}

package func device(_ appID: String, _ pushkey: String, data: [String: JSONValue] = [:]) -> JSONValue {
    var d: [String: JSONValue] = ["app_id": .string(appID), "pushkey": .string(pushkey), "pushkey_ts": 1_700_000_000]
    if !data.isEmpty { d["data"] = .object(data) }
    return .object(d)
}

package func webDevice(_ sub: FakeWebPushSubscription, data: [String: JSONValue] = [:]) -> JSONValue {
    var d = data
    if d["endpoint"] == nil { d["endpoint"] = .string(sub.endpoint) }
    d["auth"] = .string(sub.auth)
    return device(MatrixFakes.webApp, sub.p256dh, data: d)
}

package let message: [String: JSONValue] = [
    "event_id": "$ev1", "room_id": "!room:example.org", "type": "m.room.message", "sender": "@tom:example.org",
    "sender_display_name": "Major Tom", "room_name": "Mission Control",
    "content": ["msgtype": "m.text", "body": "Hello from orbit"], "counts": ["unread": 2],
]

package func expectMatrixError(_ r: HTTPReply, status: Int, errcode: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.status == status, "body: \(r.rawBody)", sourceLocation: sourceLocation)
    #expect(r.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
    #expect(r["errcode"]?.stringValue == errcode, "body: \(r.rawBody)", sourceLocation: sourceLocation)
    #expect((r["error"]?.stringValue ?? "").isEmpty == false, sourceLocation: sourceLocation)
    #expect((r["message"]?.stringValue ?? "").isEmpty == false, sourceLocation: sourceLocation)
}
