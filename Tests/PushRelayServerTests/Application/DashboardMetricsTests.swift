import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayPostgres
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// The Grafana dashboard (`deploy/grafana/pushrelay.json`) and the Prometheus alert rules
/// (`deploy/prometheus/alerts.yml`) query only metrics PushRelay really exports: after real traffic (Home Assistant
/// notifications with tokens past their quota, a Matrix notify, a provider failing until its breaker opens, a provider
/// at its in-flight bound, a websocket), every `pushrelay_*` name in their PromQL is a series in `/metrics`.
///
/// Alone: real traffic of every kind, then every dashboard and alert query against /metrics.
@Suite struct DashboardMetricsTests {
    static let admin = "dashboard-admin-token-0123456789"

    // MARK: PromQL and exposition parsing

    /// The PushRelay metric names a PromQL expression reads: `pushrelay_` identifiers outside string literals
    /// (a label value such as `route="/api/sendPush.*"` or `job="pushrelay"` is not a metric).
    static func metricNames(inPromQL expr: String) -> Set<String> {
        var names: Set<String> = []
        var outside = ""
        var quote: Character?
        var escaped = false
        for c in expr {
            if let q = quote {
                if escaped {
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else if c == q {
                    quote = nil
                }
                outside.append(" ")
            } else if c == "\"" || c == "'" || c == "`" {
                quote = c
                outside.append(" ")
            } else {
                outside.append(c)
            }
        }
        let identifier = try! Regex("[a-zA-Z_:][a-zA-Z0-9_:]*")
        for match in outside.matches(of: identifier) {
            let word = String(outside[match.range])
            if word.hasPrefix("pushrelay_") { names.insert(word) }
        }
        return names
    }

    /// What a scrape exports: the name of every sample line, and the type of every family (`# TYPE`).
    static func exposition(_ text: String) -> (series: Set<String>, types: [String: String]) {
        var series: Set<String> = []
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count >= 4 { types[String(parts[2])] = String(parts[3]) }
            } else if !line.hasPrefix("#"), let end = line.firstIndex(where: { $0 == "{" || $0 == " " }) {
                series.insert(String(line[..<end]))
            }
        }
        return (series, types)
    }

    /// Why `name` (as a query uses it) is not served by this scrape, or nil when it is. A histogram is queried through
    /// `_bucket`, `_sum` and `_count`, never by its family name; `_bucket` only makes sense on a histogram.
    static func problem(with name: String, series: Set<String>, types: [String: String]) -> String? {
        if let type = types[name], type == "histogram" || type == "summary" {
            return "\(name) is a \(type): query \(name)_bucket, _sum or _count"
        }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let family = String(name.dropLast(suffix.count))
            if let type = types[family] {
                if suffix == "_bucket" && type != "histogram" { return "\(name): \(family) is a \(type), it has no buckets" }
                return series.contains(name) ? nil : "\(name) (of the \(type) \(family)) has no series"
            }
        }
        return series.contains(name) ? nil : "\(name) is not in /metrics"
    }

    /// Every PromQL query of the dashboard: panel targets' `expr`, and the template variables' queries.
    static func dashboardQueries() throws -> [(where: String, expr: String)] {
        let url = RepositoryRoot.url.appendingPathComponent("deploy/grafana/pushrelay.json")
        let dashboard = try JSONParser.parse(Array(try Data(contentsOf: url)))
        var queries: [(String, String)] = []
        func walk(_ v: JSONValue, _ title: String) {
            switch v {
            case .object(let o):
                let here = o["title"]?.stringValue ?? o["name"]?.stringValue ?? title
                if let e = o["expr"]?.stringValue { queries.append(("panel '\(here)'", e)) }
                if case .string(let q)? = o["definition"] { queries.append(("variable '\(here)'", q)) }
                if case .object(let q)? = o["query"], let s = q["query"]?.stringValue { queries.append(("variable '\(here)'", s)) }
                for (_, child) in o { walk(child, here) }
            case .array(let a):
                for child in a { walk(child, title) }
            default:
                break
            }
        }
        walk(dashboard, "dashboard")
        return queries
    }

    /// Every alert's `expr` in the rule file.
    static func alertQueries() throws -> [(where: String, expr: String)] {
        let url = RepositoryRoot.url.appendingPathComponent("deploy/prometheus/alerts.yml")
        let rules = try YAMLTree.parse(String(contentsOf: url, encoding: .utf8), source: "alerts.yml")
        var queries: [(String, String)] = []
        for group in rules["groups"]?.arrayValue ?? [] {
            for rule in group["rules"]?.arrayValue ?? [] {
                let name = rule["alert"]?.stringValue ?? rule["record"]?.stringValue ?? "?"
                if let e = rule["expr"]?.stringValue { queries.append(("alert \(name)", e)) }
            }
        }
        return queries
    }

    @Test func thePromQLNameParserSkipsLabelValuesAndKeepsSuffixes() {
        let expr = #"""
            histogram_quantile(0.99, sum by (le) (rate(pushrelay_delivery_duration_seconds_bucket{job=~"pushrelay_x", route="/a"}[5m])))
            / on() sum(pushrelay_sqlite_writes) or up{job='pushrelay_y'}
            """#
        #expect(Self.metricNames(inPromQL: expr) == ["pushrelay_delivery_duration_seconds_bucket", "pushrelay_sqlite_writes"])
        let scrape = """
            # TYPE pushrelay_h histogram
            pushrelay_h_bucket{le="+Inf"} 1
            pushrelay_h_sum 0.1
            pushrelay_h_count 1
            # TYPE pushrelay_g gauge
            pushrelay_g 2.0
            """
        let (series, types) = Self.exposition(scrape)
        #expect(Self.problem(with: "pushrelay_h_bucket", series: series, types: types) == nil)
        #expect(Self.problem(with: "pushrelay_h_count", series: series, types: types) == nil)
        #expect(Self.problem(with: "pushrelay_g", series: series, types: types) == nil)
        #expect(Self.problem(with: "pushrelay_h", series: series, types: types) != nil, "a histogram has no series of its own name")
        #expect(Self.problem(with: "pushrelay_g_bucket", series: series, types: types) != nil)
        #expect(Self.problem(with: "pushrelay_missing_total", series: series, types: types) != nil)
    }

    // MARK: The real server

    @Test func everyMetricTheDashboardAndTheAlertsQueryIsExportedAfterRealTraffic() async throws {
        let yaml = """
            providers:
              sandbox:
                type: sandbox
            matrix:
              apps:
                im.example.android:
                  provider: sandbox
            """
        let down = DeliveryFailure.transient(reason: "UNAVAILABLE", message: "FCM is unavailable (HTTP 503)", retryAfterSeconds: nil)
        let flaky = ScriptedProvider(name: "flaky", [.fail(down)])
        let gate = ScriptedProvider.Gate()
        let slow = ScriptedProvider(name: "slow", [.hold(gate)])
        try await TestServer.with(
            yaml: yaml,
            providers: ["flaky": flaky, "slow": slow],
            configure: { c in
                c.apps = [
                    .init(match: "io.flaky", provider: "flaky"),
                    .init(match: "io.slow", provider: "slow"),
                    .init(match: "*", provider: "sandbox"),
                ]
                c.quota.dailyLimit = 2
                c.delivery.maxAttempts = 1
                c.delivery.maxInFlight = 1
                c.delivery.maxWaitMs = 200
                c.delivery.breakerMinRequests = 2
                c.metricsEnabled = true
                c.adminToken = Self.admin
            }
        ) { (s: TestServer) async throws in
            // Home Assistant: two tokens, each past its daily quota of 2; an iOS notification.
            for token in ["dash:android-1", "dash:android-2"] {
                var statuses: [Int] = []
                for _ in 0..<4 { statuses.append(try await s.android(TestServer.haBody(token: token)).status) }
                #expect(statuses == [201, 201, 429, 429])
            }
            #expect(try await s.ios(TestServer.haBody(token: "dash:ios", appID: "io.robbie.HomeAssistant")).status == 201)

            // Matrix: one notification to a device on the sandbox.
            let matrix = try await s.post(
                "/_matrix/push/v1/notify",
                [
                    "notification": [
                        "event_id": "$dashboard-event", "room_id": "!room:example.org", "type": "m.room.message",
                        "sender": "@alice:example.org", "counts": ["unread": 1],
                        "devices": [["app_id": "im.example.android", "pushkey": "dashboard-pushkey", "pushkey_ts": 1_700_000_000]],
                    ]
                ]
            )
            #expect(matrix.status == 200 && matrix["rejected"] == .array([]), "\(matrix.rawBody)")

            // A provider failing transiently until its circuit breaker opens.
            for i in 0..<2 {
                expectJSONError(try await s.android(TestServer.haBody(token: "dash:flaky-\(i)", appID: "io.flaky")), status: 503)
            }
            let open = try await s.android(TestServer.haBody(token: "dash:flaky-open", appID: "io.flaky"))
            #expect(open["errorCode"] == "ProviderCircuitOpen", "\(open.rawBody)")

            // A provider at its in-flight bound of 1: the second dispatch waits 200 ms for the place, then is shed.
            async let held = s.android(TestServer.haBody(token: "dash:slow-1", appID: "io.slow"))
            try await eventually("the slow call starts") { slow.callCount >= 1 }
            let shed = try await s.android(TestServer.haBody(token: "dash:slow-2", appID: "io.slow"))
            #expect(shed["errorCode"] == "ProviderBusy", "\(shed.rawBody)")
            gate.open()
            #expect(try await held.status == 201)

            // A websocket held open while scraping; readiness and health probes.
            let ws = WSTestClient.connect(port: s.port)
            #expect(try await ws.receive()["type"] == "auth_required")
            #expect(try await s.request(.GET, "/ready").status == 200)
            #expect(try await s.request(.GET, "/health").status == 200)

            let scrape = try await s.request(.GET, "/metrics", headers: [("Authorization", "Bearer \(Self.admin)")])
            ws.close()
            #expect(scrape.status == 200)
            let (series, types) = Self.exposition(scrape.rawBody)
            #expect(
                MetricsScrape.lines(scrape.rawBody, "pushrelay_channel_connections").first?.hasPrefix("pushrelay_channel_connections 1") == true,
                "the open websocket is counted"
            )

            let queries = try Self.dashboardQueries() + Self.alertQueries()
            #expect(try Self.dashboardQueries().count >= 20, "the dashboard's panels were found")
            #expect(try Self.alertQueries().count >= 6, "the alert rules were found")
            var queried: Set<String> = []
            for (place, expr) in queries {
                let names = Self.metricNames(inPromQL: expr)
                queried.formUnion(names)
                for name in names.sorted() {
                    // This server runs on SQLite: the PostgreSQL row's figures are the PostgreSQL engine's statistics.
                    if name.hasPrefix("pushrelay_postgres_") {
                        #expect(PostgresStorageEngine.statisticNames.contains(name), "\(place): \(name) is not a PostgreSQL statistic")
                        continue
                    }
                    if let problem = Self.problem(with: name, series: series, types: types) {
                        Issue.record("\(place): \(problem)\n  expr: \(expr)")
                    }
                }
            }
            // The figures the issue asks the dashboard to show are all among them.
            for name in [
                "pushrelay_http_requests_total", "pushrelay_http_request_duration_seconds_bucket", "pushrelay_deliveries_total",
                "pushrelay_delivery_duration_seconds_bucket", "pushrelay_deliveries_shed_total", "pushrelay_provider_circuit_open",
                "pushrelay_provider_circuit_transitions_total", "pushrelay_channel_connections", "pushrelay_channel_subscriptions",
                "pushrelay_sqlite_transactions", "pushrelay_sqlite_writes", "pushrelay_sqlite_wal_syncs",
            ] + PostgresStorageEngine.statisticNames {
                #expect(queried.contains(name), "nothing queries \(name)")
            }
        }
    }
}
