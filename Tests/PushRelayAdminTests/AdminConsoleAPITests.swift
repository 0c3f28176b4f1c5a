import Foundation
import NIOHTTP1
import PushRelayCore
import PushRelayServerTestRig
import PushRelayStore
import Testing

@testable import PushRelayAdmin
@testable import PushRelayServer

/// The endpoints the admin console reads and writes, and the console's page itself.
@Suite struct AdminConsoleAPITests {
    typealias C = ConsoleTestConfig

    static func withServer<T: Sendable>(_ body: @Sendable (TestServer) async throws -> T) async throws -> T {
        try await TestServer.with(.router, yaml: C.yaml, providers: ["console": ConsoleTrafficProvider()], configure: C.configure, body)
    }

    @Test func everyConsoleEndpointRequiresTheAdminToken() async throws {
        try await Self.withServer { s in
            for (method, path) in [
                (HTTPMethod.GET, "/admin/v1/stats"), (.GET, "/admin/v1/dead-tokens"), (.DELETE, "/admin/v1/dead-tokens/abc"),
                (.GET, "/admin/v1/matrix/queue"), (.POST, "/admin/v1/quotas/abc/reset"),
            ] {
                expectJSONError(try await s.request(method, path), status: 401, errorType: "Unauthorized")
            }
        }
    }

    @Test func statsCountTheLedgerAndTheDeliveryLog() async throws {
        try await Self.withServer { s in
            // Yesterday: 2 accepted.
            s.clock.set("2026-11-20T23:10:00Z")
            for _ in 0..<2 { #expect(try await s.android(TestServer.haBody(token: "fcm:yesterday-token-000001")).status == 201) }
            // Today, 09:xx: 7 posts to a limit of 5 (5 accepted, 2 refused); 12:xx: one failed, one dead.
            s.clock.set("2026-11-21T09:15:00Z")
            var statuses: [Int] = []
            for _ in 0..<7 { statuses.append(try await s.android(TestServer.haBody(token: "fcm:busy-token-0000000001")).status) }
            #expect(statuses == [201, 201, 201, 201, 201, 429, 429])
            s.clock.set("2026-11-21T12:30:00Z")
            #expect(try await s.android(TestServer.haBody(token: "fcm:broken-token-00000001")).status != 201)
            #expect(try await s.android(TestServer.haBody(token: "fcm:uninstalled-token-0001")).status == 410)
            #expect(try await s.ios(TestServer.haBody(token: "apns-ipad-0000000000000001", appID: "io.robbie.HomeAssistant")).status == 201)

            let r = try await s.request(.GET, "/admin/v1/stats?days=3", headers: C.auth)
            #expect(r.status == 200, "\(r.rawBody)")
            #expect(r["today"] == "2026-11-21")
            #expect(r["generatedAt"] == "2026-11-21T12:30:00.000Z")
            let days = try #require(r["days"]?.arrayValue)
            #expect(days.map { $0["day"]?.stringValue } == ["2026-11-19", "2026-11-20", "2026-11-21"])
            #expect(days[0] == ["day": "2026-11-19", "accepted": 0, "rejectedByQuota": 0, "failed": 0, "tokens": 0])
            #expect(days[1] == ["day": "2026-11-20", "accepted": 2, "rejectedByQuota": 0, "failed": 0, "tokens": 1])
            #expect(days[2] == ["day": "2026-11-21", "accepted": 6, "rejectedByQuota": 2, "failed": 2, "tokens": 4])
            #expect(r["todayTotals"] == ["accepted": 6, "rejectedByQuota": 2, "failed": 2, "tokens": 4])

            let hours = try #require(r["hours"]?.arrayValue)
            #expect(hours.count == 24)
            #expect(hours[9] == ["hour": 9, "accepted": 5, "failed": 0])
            #expect(hours[12] == ["hour": 12, "accepted": 1, "failed": 2])
            #expect(
                hours.enumerated().allSatisfy {
                    [9, 12].contains($0.offset) || $0.element == ["hour": .int(Int64($0.offset)), "accepted": 0, "failed": 0]
                }
            )

            // Every delivery-log row of today, the rate-limit notice included (one, to the busy token).
            let deliveries = try #require(r["deliveries"]?.arrayValue)
            #expect(
                deliveries == [
                    ["provider": "console", "outcome": "delivered", "count": 6],
                    ["provider": "console", "outcome": "invalid_payload", "count": 1],
                    ["provider": "console", "outcome": "invalid_token", "count": 1],
                    ["provider": "sandbox", "outcome": "delivered", "count": 1],
                ],
                "\(deliveries)"
            )
            #expect(r["kinds"] == ["notification": 8, "rate_limit_notice": 1])
            #expect(r["deliveryLogComplete"] == true)
            #expect(r["channels"] == ["connections": 0, "subscriptions": 0, "unconfirmed": 0])
            #expect(r["matrixQueue"] == ["queued": 0, "due": 0])
            // Latency per provider since the start, from /metrics' histogram: one observation per logged delivery.
            let latency = try #require(r["latency"]?.arrayValue)
            let logged = try await s.deliveriesByProvider()
            #expect(latency.map { $0["provider"]?.stringValue ?? "" } == logged.keys.sorted())
            for l in latency {
                #expect(l["count"] == .int(Int64(logged[l["provider"]?.stringValue ?? ""] ?? -1)))
                #expect(l["p50"]?.doubleValue != nil && l["p99"]?.doubleValue != nil, "\(l)")
            }

            expectJSONError(try await s.request(.GET, "/admin/v1/stats?days=0", headers: C.auth), status: 400)
            expectJSONError(try await s.request(.GET, "/admin/v1/stats?days=many", headers: C.auth), status: 400)
            #expect(try await s.request(.GET, "/admin/v1/stats", headers: C.auth)["days"]?.arrayValue?.count == 30)
        }
    }

    @Test func resetDeletesTheTokensDay() async throws {
        try await Self.withServer { s in
            for _ in 0..<6 { _ = try await s.android(TestServer.haBody(token: "fcm:reset-me-0000000001")) }
            let r = try await s.request(.POST, "/admin/v1/quotas/fcm:reset-me-0000000001/reset", headers: C.auth)
            #expect(r.status == 200, "\(r.rawBody)")
            #expect(r["target"] == "fcm:reset-me-0000000001")
            #expect(r["rateLimits"]?["attempts"] == 0)
            #expect(r["rateLimits"]?["remaining"] == 5)
            #expect(r["days"]?.arrayValue?.isEmpty == true)
            #expect(try await s.android(TestServer.haBody(token: "fcm:reset-me-0000000001")).status == 201)
            expectJSONError(try await s.request(.POST, "/admin/v1/quotas/fcm:nobody-000000000001/reset", headers: C.auth), status: 404)
            expectJSONError(try await s.request(.POST, "/admin/v1/quotas/fcm:reset-me-0000000001/reset?day=soon", headers: C.auth), status: 400)
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas/fcm:reset-me-0000000001/reset", headers: C.auth), status: 405)
        }
    }

    @Test func deadTokensAreListedAndCanBeForgotten() async throws {
        try await Self.withServer { s in
            let token = "fcm:uninstalled-phone-000000001"
            #expect(try await s.android(TestServer.haBody(token: token)).status == 410)
            #expect(try await s.android(TestServer.haBody(token: "fcm:fine-token-000000000001")).status == 201)
            let list = try await s.request(.GET, "/admin/v1/dead-tokens", headers: C.auth)
            #expect(list.status == 200, "\(list.rawBody)")
            #expect(list["count"] == 1)
            let entry = try #require(list["deadTokens"]?.arrayValue?.first)
            #expect(entry["target"]?.stringValue == token)
            #expect(entry["provider"] == "console")
            #expect(entry["reason"] == "UNREGISTERED")
            #expect(entry["message"] == "Requested entity was not found.")
            #expect(entry["markedAt"] == "2026-11-21T12:00:00.000Z")
            #expect(entry["expiresAt"]?.stringValue?.hasPrefix("2026-") == true)

            let forgotten = try await s.request(.DELETE, "/admin/v1/dead-tokens/\(token)", headers: C.auth)
            #expect(forgotten.status == 200)
            #expect(forgotten["forgotten"] == true)
            #expect(try await s.request(.GET, "/admin/v1/dead-tokens", headers: C.auth)["count"] == 0)
            expectJSONError(try await s.request(.DELETE, "/admin/v1/dead-tokens/\(token)", headers: C.auth), status: 404)
            expectJSONError(try await s.request(.GET, "/admin/v1/dead-tokens?limit=0", headers: C.auth), status: 400)
        }
    }

    @Test func theMatrixQueueIsCountedWithShortenedPushkeys() async throws {
        try await Self.withServer { s in
            // Not due yet, so the server's retry loop leaves them alone (it is covered by MatrixGatewayTests).
            let now = s.clock.now()
            try await s.storage.matrix.enqueue(
                [
                    (
                        appID: "im.vector.app", pushkey: "matrix-pushkey-abcdefghijklmnop", eventID: "$ev1", notification: "{}",
                        lastError: "UNAVAILABLE"
                    ),
                    (appID: "im.vector.app", pushkey: "matrix-pushkey-qrstuvwxyz012345", eventID: nil, notification: "{}", lastError: "timeout"),
                ],
                attempts: 1,
                nextAttemptAt: now.addingTimeInterval(600),
                now: now
            )
            let r = try await s.request(.GET, "/admin/v1/matrix/queue", headers: C.auth)
            #expect(r.status == 200, "\(r.rawBody)")
            #expect(r["queued"] == 2)
            #expect(r["due"] == 0)
            let items = try #require(r["items"]?.arrayValue)
            try #require(items.count == 2)
            #expect(items[0]["pushkey"] == "matrix…klmnop")
            #expect(items[0]["appId"] == "im.vector.app")
            #expect(items[0]["eventId"] == "$ev1")
            #expect(items[0]["lastError"] == "UNAVAILABLE")
            #expect(items[0]["attempts"] == 1)
            #expect(items[0]["nextAttemptAt"] == "2026-11-21T12:10:00.000Z")
            #expect(items[0]["createdAt"] == "2026-11-21T12:00:00.000Z")
            #expect(items[1]["eventId"] == .null)
            #expect(!r.rawBody.contains("matrix-pushkey-abcdefghijklmnop"), "pushkeys are not listed in full")
            #expect(try await s.request(.GET, "/admin/v1/stats?days=1", headers: C.auth)["matrixQueue"] == ["queued": 2, "due": 0])
        }
    }

    @Test func theConsolePageIsStaticWithAContentSecurityPolicy() async throws {
        try await Self.withServer { s in
            let page = try await s.request(.GET, "/admin/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            let csp = try #require(page.headers["content-security-policy"])
            #expect(csp.hasPrefix("default-src 'self';"))
            #expect(csp.contains("script-src 'self';"))
            #expect(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval") && !csp.contains("http"))
            #expect(page.headers["x-content-type-options"] == "nosniff")
            #expect(page.headers["x-frame-options"] == "DENY")
            // No inline script, nothing from another host.
            #expect(!page.rawBody.contains("<script>"))
            #expect(page.rawBody.contains(#"<script src="console.js" defer></script>"#))
            #expect(!page.rawBody.contains("http://") && !page.rawBody.contains("https://") && !page.rawBody.contains("//cdn"))
            #expect(!page.rawBody.contains(C.adminToken))

            // The bare path redirects relatively, so that a reverse proxy's path prefix is kept
            // (/prefix/admin -> /prefix/admin/).
            let redirect = try await s.request(.GET, "/admin")
            #expect(redirect.status == 301)
            #expect(redirect.headers["location"] == "admin/")
            #expect(redirect.rawBody.isEmpty)

            let js = try await s.request(.GET, "/admin/console.js")
            #expect(js.status == 200)
            #expect(js.headers["content-type"] == "text/javascript; charset=utf-8")
            #expect(js.rawBody.contains("sessionStorage"))
            #expect(!js.rawBody.contains("localStorage") && !js.rawBody.contains("document.cookie"))
            let css = try await s.request(.GET, "/admin/console.css")
            #expect(css.status == 200)
            #expect(css.headers["content-type"] == "text/css; charset=utf-8")
            #expect(!css.rawBody.contains("@import") && !css.rawBody.contains("url(http"))
            expectJSONError(try await s.request(.GET, "/admin/nothing.js"), status: 404)
            expectJSONError(try await s.request(.POST, "/admin/", body: "{}"), status: 405)
        }
    }

    @Test func withoutAnAdminTokenThereIsNoConsole() async throws {
        try await TestServer.with(.router) { (s: TestServer) async throws in
            expectJSONError(try await s.request(.GET, "/admin/"), status: 404)
            expectJSONError(try await s.request(.GET, "/admin/console.js"), status: 404)
            expectJSONError(try await s.request(.GET, "/admin/v1/stats"), status: 404)
        }
    }

    @Test func aDaySummaryCountsByHourAndStopsAtTheDayBefore() {
        func row(_ id: Int64, _ at: String, outcome: String = "delivered", kind: String = "notification", counted: Bool = true) -> LoggedDelivery {
            try! LoggedDelivery.reading(
                id: id,
                at: at,
                day: String(at.prefix(10)),
                pushToken: "t",
                appID: nil,
                platform: nil,
                provider: "p",
                kind: kind,
                counted: counted,
                outcome: outcome,
                messageID: nil,
                errorMessage: nil,
                payload: nil
            )
        }
        let day = UTCDay(string: "2026-11-21")!
        let rows = [
            row(5, "2026-11-21T23:59:59.999Z"), row(4, "2026-11-21T07:00:00.000Z", outcome: "transient"),
            row(3, "2026-11-21T07:30:00.000Z", kind: "rate_limit_notice", counted: false), row(2, "2026-11-21T00:00:00.000Z"),
            row(1, "2026-11-20T23:00:00.000Z"),
        ]
        let summary = DeliverySummary.counting(rows, day: day, scanLimit: 5)
        #expect(summary.complete, "the scan reached the day before")
        let stats = AdminStats.deliveries(summary)
        #expect(stats.hours[23].accepted == 1)
        #expect(stats.hours[7] == AdminStats.Hour(hour: 7, accepted: 0, failed: 1))
        #expect(stats.hours[0].accepted == 1)
        #expect(stats.hours.reduce(0) { $0 + $1.accepted + $1.failed } == 3, "the notice and yesterday's row are not in the hours")
        #expect(stats.kinds == ["notification": 3, "rate_limit_notice": 1])
        #expect(!DeliverySummary.counting(Array(rows.prefix(4)), day: day, scanLimit: 4).complete, "a full scan within the day may have missed rows")
        #expect(DeliverySummary.counting(Array(rows.prefix(4)), day: day, scanLimit: 10).complete, "fewer rows than the limit: the whole log")
    }

    @Test func latencyPercentilesAreHistogramBucketBounds() {
        let text = """
            # TYPE pushrelay_delivery_duration_seconds histogram
            pushrelay_delivery_duration_seconds_bucket{provider="fcm",le="0.001"} 0
            pushrelay_delivery_duration_seconds_bucket{provider="fcm",le="0.01"} 50
            pushrelay_delivery_duration_seconds_bucket{provider="fcm",le="0.1"} 95
            pushrelay_delivery_duration_seconds_bucket{provider="fcm",le="1.0"} 99
            pushrelay_delivery_duration_seconds_bucket{provider="fcm",le="+Inf"} 100
            pushrelay_delivery_duration_seconds_sum{provider="fcm"} 3.2
            pushrelay_delivery_duration_seconds_count{provider="fcm"} 100
            pushrelay_delivery_duration_seconds_bucket{le="0.001",provider="slow"} 0
            pushrelay_delivery_duration_seconds_bucket{le="+Inf",provider="slow"} 2
            pushrelay_delivery_duration_seconds_bucket{provider="idle",le="+Inf"} 0
            pushrelay_http_request_duration_seconds_bucket{route="/x",le="0.001"} 7
            """
        #expect(
            DeliveryLatency.parse(text) == [
                DeliveryLatency(provider: "fcm", count: 100, p50: 0.01, p90: 0.1, p99: 1.0),
                DeliveryLatency(provider: "slow", count: 2, p50: nil, p90: nil, p99: nil),
            ]
        )
    }

    @Test func theDayFiguresComeFromTheLedger() {
        let rows = [
            UsageRow(day: "2026-11-21", pushToken: "a", attempts: 9, successful: 5, errors: 1, noticeSent: true, updatedAt: ""),
            UsageRow(day: "2026-11-21", pushToken: "b", attempts: 2, successful: 2, errors: 0, noticeSent: false, updatedAt: ""),
        ]
        let d = AdminStats.day(UTCDay(string: "2026-11-21")!, rows: rows)
        #expect(d == AdminStats.Day(day: "2026-11-21", accepted: 7, rejectedByQuota: 3, failed: 1, tokens: 2))
    }
}
