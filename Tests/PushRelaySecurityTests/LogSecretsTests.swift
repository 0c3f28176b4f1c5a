import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import PushRelaySQLite
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// No secret reaches a log line at any level. Every `TestServer` logs at `trace` into a `LogCapture` and checks its
/// own secrets after each test (`TestServer.with`), so the whole suite is covered; these tests show the scan works and
/// drive the paths that handle secrets on purpose.
@Suite struct LogSecretsTests {
    static let adminToken = "log-secrets-admin-token-0123456789"
    static let apnsToken = String(repeating: "5eed", count: 16)
    static let fcmToken = "fcm-log-secret-token:" + String(repeating: "Q", count: 40)

    @Test func theScanFindsEachKindOfSecret() {
        let capture = LogCapture()
        let logger = capture.logger(label: "control")
        let push = "a-full-push-token-0123456789abcdef"
        logger.trace("admin \(Self.adminToken)")
        logger.debug("token", metadata: ["token": .string(push)])
        logger.info("channel prc_0123456789abcdefghijklmnopqrstuv")
        logger.notice("key prk_0123456789abcdefghijklmnopqrstuv")
        logger.warning("oauth ya29.a0AfH6SMBexample-token")
        logger.debug("jwt eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJBQkMxMjMifQ.sig")
        logger.trace("pem -----BEGIN PRIVATE KEY-----")
        logger.trace("header Authorization: Bearer abcdefghijklmnopqrstuvwxyz")
        logger.trace("shortened \(TokenDisplay.short(push)) is fine")
        let found = capture.leaks(of: [Self.adminToken, push])
        #expect(found.count == 8, "\(found.map(\.what))")
        #expect(capture.lines.count == 9)
        #expect(capture.lines.first?.level == .trace, "trace lines are captured")
    }

    @Test func pathsAreShortenedInLogs() {
        #expect(LogRedaction.path("/relay-to/fcm/\(Self.fcmToken)/extra") == "/relay-to/fcm/\(TokenDisplay.short(Self.fcmToken))/extr…")
        #expect(LogRedaction.path("/admin/v1/quotas/\(Self.apnsToken)?day=x") == "/admin/v1/quotas/\(TokenDisplay.short(Self.apnsToken))")
        #expect(LogRedaction.path("/api/sendPush/android/v1") == "/api/sendPush/android/v1")
    }

    @Test func aBrokenBodyOnATokenPathLogsTheTokenShortened() async throws {
        // Regression: the router logged the full path of a request whose body broke off, push token included.
        try await TestServer.with(yaml: "admin:\n  token: \"\(Self.adminToken)\"\n") { s in
            let broken = "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"lim\r\nZZ\r\n"
            let requests = [
                "POST /relay-to/fcm/\(Self.fcmToken) HTTP/1.1\r\nHost: x\r\nContent-Encoding: aes128gcm\r\n" + broken,
                "PUT /admin/v1/limits/\(Self.apnsToken) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\n"
                    + "Content-Type: application/json\r\n" + broken,
            ]
            for request in requests {
                let exchange = await RawHTTP.exchange(port: s.port, request)
                #expect(exchange.responses.first.map { $0.status / 100 } == 4, "\(exchange)")
            }
            try await eventually("the broken bodies are logged") {
                s.logs.lines.filter { $0.text.contains("request body is not valid HTTP/1.1") }.count >= 1
            }
            s.logs.expectNoLeaks(of: [Self.fcmToken, Self.apnsToken, Self.adminToken])
        }
    }

    @Test func aServerAtWorkLogsNoSecretAtAnyLevel() async throws {
        try await withRelayFakes(configure: { c in c.adminToken = Self.adminToken }) { s, env in
            // Home Assistant → FCM (an OAuth access token is fetched), the relay → APNs (a provider JWT is signed).
            #expect(try await s.android(TestServer.haBody(token: Self.fcmToken)).status == 201)
            let relay = try await s.rawPost("/relay-to/production/\(Self.apnsToken)", body: [1, 2, 3], headers: [("Content-Encoding", "aes128gcm")])
            #expect(relay.status == 201, "\(relay.rawBody)")
            env.fcm.script("dead-token-for-logs-0123456789", [.unregistered])
            #expect(try await s.android(TestServer.haBody(token: "dead-token-for-logs-0123456789")).status == 410)
            // The admin token, right and wrong; a push token in an admin path.
            let admin = [("Authorization", "Bearer \(Self.adminToken)")]
            #expect(try await s.request(.GET, "/admin/v1/quotas/\(Self.fcmToken)", headers: admin).status == 200)
            #expect(try await s.request(.GET, "/admin/v1/quotas", headers: [("Authorization", "Bearer \(Self.adminToken)x")]).status == 401)
            // An API key: a device and a call.
            let key = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "logs").key
            let device = try await s.bearerPost(
                "/api/v1/devices",
                ["platform": "android", "app_id": "com.example.phone", "push_token": .string(Self.fcmToken + "-call")],
                key: key
            )
            #expect(device.status == 201, "\(device.rawBody)")
            let call = try await s.bearerPost(
                "/api/v1/calls",
                ["device_id": device["device_id"] ?? "", "caller_name": "Ann", "caller_id": "ann", "invite": "v=0"],
                key: key
            )
            #expect(call.status / 100 == 2, "\(call.rawBody)")
            // A channel token over the websocket, and a wrong one.
            let (channelToken, _) = try await SQLitePushChannelStore(database: s.database).createToken(webhookID: "hook-logs", label: nil)
            for token in [channelToken, channelToken + "x"] {
                let ws = WSTestClient.connect(port: s.port)
                _ = try await ws.receive()
                ws.send(["type": "auth", "access_token": .string(token)])
                _ = try await ws.receive()
            }
            #expect(s.logs.lines.contains { $0.level <= .debug }, "debug and trace lines are captured")
            var secrets = await LogCapture.secrets(of: try PushRelayConfig(tree: [:]), database: s.database)
            let stored = ["dead-token-for-logs-0123456789", Self.fcmToken + "-call"]
            #expect(stored.allSatisfy(secrets.contains), "the scan reads the push tokens the database holds: \(secrets)")
            secrets += [Self.adminToken, key, channelToken, Self.fcmToken, Self.apnsToken]
            s.logs.expectNoLeaks(of: secrets)
        }
    }
}
