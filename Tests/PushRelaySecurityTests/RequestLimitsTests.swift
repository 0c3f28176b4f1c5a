import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import Testing

/// The body and header limits hold on every route: an oversize body gets 413 `PayloadTooLarge` and oversize headers
/// 431 `HeadersTooLarge`, as JSON with a message and a closed connection; never a hang, never a 500.
@Suite struct RequestLimitsTests {
    static let adminToken = "limits-admin-token-0123456789"
    static let maxBody = 4096
    /// Past `http.max_body_bytes` and past the relay's own `relay.max_body_bytes` (8192).
    static let oversize = 20_000
    static let hex = String(repeating: "ab", count: 32)

    /// Every route PushRelay registers, with the method that reads a body where there is one.
    static let routes: [(method: String, path: String)] = [
        ("POST", "/api/sendPush/android/v1"), ("POST", "/api/sendPushNotification"), ("POST", "/api/sendPush/iOS/v1"),
        ("POST", "/api/checkRateLimits"), ("POST", "/_matrix/push/v1/notify"), ("POST", "/relay-to/production/\(hex)"),
        ("POST", "/relay-to/fcm/limits-token"), ("GET", "/relay-to/_health"), ("POST", "/api/v1/devices"),
        ("DELETE", "/api/v1/devices/some-id"), ("POST", "/api/v1/devices/some-id/rotate-key"), ("POST", "/api/v1/calls"),
        ("GET", "/admin/v1/quotas"), ("GET", "/admin/v1/quotas/limits-token"), ("PUT", "/admin/v1/limits/limits-token"),
        ("DELETE", "/admin/v1/limits/limits-token"), ("GET", "/api/websocket"), ("GET", "/health"), ("GET", "/ready"),
        ("GET", "/metrics"), ("POST", "/no/such/route"),
    ]

    /// Routes that never read a body: a chunked body (no declared length) is not refused there, only ignored.
    static let bodiless: Set<String> = [
        "GET /relay-to/_health", "DELETE /api/v1/devices/some-id", "POST /api/v1/devices/some-id/rotate-key", "GET /admin/v1/quotas",
        "GET /admin/v1/quotas/limits-token", "DELETE /admin/v1/limits/limits-token", "GET /api/websocket", "GET /health", "GET /ready",
        "GET /metrics", "POST /no/such/route",
    ]

    /// The request head; the calls API gets `apiKey` so that its credential check passes and the body is read.
    static func head(_ method: String, _ path: String, _ extra: String, apiKey: String = "") -> String {
        let credential = path.hasPrefix("/api/v1/") && !apiKey.isEmpty ? apiKey : adminToken
        return "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: aes128gcm\r\n"
            + "Authorization: Bearer \(credential)\r\nConnection: close\r\n" + extra
    }

    func withLimitedServer(_ body: @Sendable (TestServer) async throws -> Void) async throws {
        try await withRelayFakes(configure: { c in
            c.adminToken = Self.adminToken
            c.metricsEnabled = true
            c.http.maxBodyBytes = Self.maxBody
            c.maxFailedAuthsPerMinute = 1_000_000
        }) { s, _ in try await body(s) }
    }

    /// One JSON answer with that status and a message, then a close (the requests ask for one); Matrix's 413 carries
    /// its own `errcode` as `errorType`.
    static func expectRefusal(_ exchange: RawHTTP.Exchange, status: Int, errorType: String, _ what: String) {
        let reply = exchange.responses.first
        #expect(reply?.status == status, "\(what): \(exchange)")
        #expect(reply?.headers["content-type"] == "application/json", "\(what)")
        #expect([errorType, "M_TOO_LARGE"].contains(reply?.json["errorType"]?.stringValue ?? ""), "\(what): \(reply?.body ?? "")")
        #expect(reply?.json["message"]?.stringValue?.isEmpty == false, "\(what)")
        #expect(exchange.closed, "\(what): answered at once, not left hanging: \(exchange)")
    }

    @Test func anOversizeBodyIs413OnEveryRoute() async throws {
        try await withLimitedServer { s in
            let body = String(repeating: "a", count: Self.oversize)
            for (method, path) in Self.routes {
                let exchange = await RawHTTP.exchange(
                    port: s.port,
                    Self.head(method, path, "Content-Length: \(body.utf8.count)\r\n\r\n") + body,
                    limit: 10
                )
                Self.expectRefusal(exchange, status: 413, errorType: "PayloadTooLarge", "\(method) \(path) with Content-Length")
            }
        }
    }

    @Test func anOversizeChunkedBodyIs413OnEveryRoute() async throws {
        try await withLimitedServer { s in
            let key = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "limits").key
            let chunk = String(repeating: "b", count: 1000)
            let chunks = String(repeating: "3e8\r\n\(chunk)\r\n", count: Self.oversize / 1000) + "0\r\n\r\n"
            for (method, path) in Self.routes {
                let exchange = await RawHTTP.exchange(
                    port: s.port,
                    Self.head(method, path, "Transfer-Encoding: chunked\r\n\r\n", apiKey: key) + chunks,
                    limit: 10
                )
                guard !Self.bodiless.contains("\(method) \(path)") else {
                    // Ignored, not refused: still a prompt answer and never a 5xx.
                    let reply = exchange.responses.first
                    #expect(reply.map { $0.status < 500 } == true && exchange.closed, "\(method) \(path) chunked: \(exchange)")
                    continue
                }
                Self.expectRefusal(exchange, status: 413, errorType: "PayloadTooLarge", "\(method) \(path) chunked")
            }
        }
    }

    @Test func oversizeHeadersAre431OnEveryRoute() async throws {
        try await withLimitedServer { s in
            let big = "X-Big: " + String(repeating: "h", count: 81 * 1024) + "\r\n"
            for (method, path) in Self.routes {
                let exchange = await RawHTTP.exchange(port: s.port, Self.head(method, path, big + "Content-Length: 0\r\n\r\n"), limit: 10)
                Self.expectRefusal(exchange, status: 431, errorType: "HeadersTooLarge", "\(method) \(path)")
            }
        }
    }
}
