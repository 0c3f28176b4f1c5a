import Foundation
import PushRelayCore
import PushRelayServerTestRig
import Testing

/// `GET /metrics`: Prometheus text, off unless configured, behind the admin token when there is one.
@Suite struct MetricsTests {
    @Test func offByDefault() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let r = try await s.request(.GET, "/metrics")
            #expect(r.status == 404)
            #expect(r["message"]?.stringValue?.isEmpty == false)
        }
    }

    @Test func countsRequestsByRouteAndStatus() async throws {
        try await TestServer.with(configure: { $0.metricsEnabled = true }) { (s: TestServer) async throws in
            let token = "metrics-test-token-" + String(repeating: "m", count: 30)
            #expect(try await s.post("/api/sendPush/android/v1", TestServer.haBody(token: token)).status == 201)
            #expect(try await s.post("/api/sendPush/android/v1", TestServer.haBody(token: token)).status == 201)
            #expect(try await s.request(.POST, "/api/sendPush/android/v1", body: "not json").status == 400)
            #expect(try await s.request(.GET, "/no/such/\(token)").status == 404)
            let r = try await s.request(.GET, "/metrics")
            #expect(r.status == 200)
            #expect(r.headers["content-type"]?.hasPrefix("text/plain") == true)
            let text = r.rawBody
            let requests = MetricsScrape.lines(text, "pushrelay_http_requests_total")
            let created = requests.filter { $0.contains(#"route="/api/sendPush/android/v1""#) && $0.contains(#"status="201""#) }
            #expect(created.count == 1 && created.first?.hasSuffix(" 2") == true, "\(requests)")
            #expect(requests.contains { $0.contains(#"status="400""#) && $0.hasSuffix(" 1") }, "\(requests)")
            #expect(requests.contains { $0.contains(#"route="unmatched""#) && $0.contains(#"status="404""#) }, "\(requests)")
            #expect(!text.contains(token), "push tokens never become label values")
            #expect(MetricsScrape.lines(text, "pushrelay_http_request_duration_seconds_count").count >= 2)
            #expect(
                MetricsScrape.lines(text, "pushrelay_channel_connections") == ["pushrelay_channel_connections 0.0"]
                    || MetricsScrape.lines(text, "pushrelay_channel_connections") == ["pushrelay_channel_connections 0"],
                "\(text)"
            )
            let writes = MetricsScrape.lines(text, "pushrelay_sqlite_writes").first.flatMap { Double($0.split(separator: " ").last ?? "") }
            #expect((writes ?? 0) >= 2, "the two reservations were group-committed")
            let syncs = MetricsScrape.lines(text, "pushrelay_sqlite_wal_syncs").first.flatMap { Double($0.split(separator: " ").last ?? "") }
            #expect((syncs ?? 0) >= 1, "an answered write was synced")
        }
    }

    @Test func theCountersTheDashboardAndAlertsQueryAreExportedAtZeroFromTheStart() async throws {
        try await TestServer.with(.router, configure: { $0.metricsEnabled = true }) { (s: TestServer) async throws in
            let text = try await s.request(.GET, "/metrics").rawBody
            #expect(
                MetricsScrape.lines(text, "pushrelay_deliveries_shed_total") == [#"pushrelay_deliveries_shed_total{provider="sandbox"} 0"#],
                "\(text)"
            )
            let transitions = MetricsScrape.lines(text, "pushrelay_provider_circuit_transitions_total").sorted()
            #expect(
                transitions == [
                    #"pushrelay_provider_circuit_transitions_total{provider="sandbox",to="closed"} 0"#,
                    #"pushrelay_provider_circuit_transitions_total{provider="sandbox",to="open"} 0"#,
                ],
                "\(text)"
            )
        }
    }

    @Test func theAdminTokenGuardsItWhenSet() async throws {
        let admin = "metrics-admin-token-0123456789"
        try await TestServer.with(configure: {
            $0.metricsEnabled = true
            $0.adminToken = admin
        }) { (s: TestServer) async throws in
            let denied = try await s.request(.GET, "/metrics")
            #expect(denied.status == 401)
            #expect(denied["errorType"] == "Unauthorized")
            let allowed = try await s.request(.GET, "/metrics", headers: [("Authorization", "Bearer \(admin)")])
            #expect(allowed.status == 200)
            #expect(allowed.rawBody.contains("pushrelay_channel_subscriptions"))
        }
    }
}
