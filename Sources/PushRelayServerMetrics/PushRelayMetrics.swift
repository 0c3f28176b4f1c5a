import Foundation
import Prometheus
import PushRelayCore

/// The Prometheus metrics of one server, recorded by every part that counts something: requests by route, method and
/// status, their durations by route, deliveries by provider and outcome, the providers' transport figures, the
/// breakers, refusals, pruning and storage timeouts. `GET /metrics` (`MetricsRoute`, with `metrics.enabled`) renders
/// them with the gauges it is given, read at each scrape.
///
/// The registry is the application's own (swift-prometheus), not the process-wide `MetricsSystem`, so several servers
/// in one process (the tests) keep separate figures.
package final class PushRelayMetrics: Sendable {
    /// A gauge read when Prometheus scrapes.
    package struct Probe: Sendable {
        package let name: String
        package let help: String
        package let read: @Sendable () -> Double

        package init(name: String, help: String, read: @escaping @Sendable () -> Double) {
            self.name = name
            self.help = help
            self.read = read
        }
    }

    package let registry = PrometheusCollectorRegistry()
    private let transportExports = Locked<[TransportExport]>([])
    static let durationBuckets: [Duration] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].map {
        .milliseconds(Int64($0 * 1000))
    }

    /// The server-wide counters are exported at 0 from the start, so that a rate or an alert on them sees a series.
    package init() {
        _ = storageTimeouts
        _ = prunedRows
    }

    /// Routes are the router's patterns (`/admin/v1/quotas/{token}`), never raw paths: tokens stay out of label values,
    /// and unknown paths all count as `unmatched`.
    package func record(route: String?, method: String, status: Int, duration: Duration) {
        // Hummingbird names an unmatched request's endpoint "NotFound"; patterns always start with "/".
        let route = route.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "unmatched"
        registry.makeCounter(
            name: "pushrelay_http_requests_total",
            labels: [("route", route), ("method", method), ("status", String(status))],
            help: "HTTP requests answered, by route pattern, method and status."
        ).increment()
        registry.makeDurationHistogram(
            name: "pushrelay_http_request_duration_seconds",
            labels: [("route", route), ("status_class", Self.statusClass(status))],
            buckets: Self.durationBuckets,
            help: "Time from request to response, by route pattern and status class (2xx, 4xx, 5xx)."
        ).record(duration)
    }

    /// The `status_class` label of `status`: 2xx, 3xx, 4xx or 5xx.
    static func statusClass(_ status: Int) -> String {
        switch status {
        case 200..<300: return "2xx"
        case 300..<400: return "3xx"
        case 400..<500: return "4xx"
        default: return "5xx"
        }
    }

    /// One provider call of the dispatcher (retries included), by provider instance and outcome (`delivered` or the
    /// failure class).
    package func recordDelivery(provider: String, outcome: String, duration: Duration) {
        registry.makeCounter(
            name: "pushrelay_deliveries_total",
            labels: [("provider", provider), ("outcome", outcome)],
            help: "Deliveries handed to a provider, by provider instance and outcome."
        ).increment()
        registry.makeDurationHistogram(
            name: "pushrelay_delivery_duration_seconds",
            labels: [("provider", provider)],
            buckets: Self.durationBuckets,
            help: "Time a provider took to take or refuse a delivery (retries included), by provider instance."
        ).record(duration)
    }

    /// A dispatch refused after waiting `delivery.max_wait_ms` for a place at its provider's `delivery.max_in_flight` bound.
    package func recordShed(provider: String) {
        shedCounter(provider: provider).increment()
    }

    /// Exports the per-provider counters the dashboard and the alerts query at 0 from the start (a series appears only
    /// once it exists, so a rate or an alert on it would see nothing before the first event), and the provider's
    /// transport figures, brought up to date at each scrape.
    package func exportProviderCounters(provider: String, transport: ProviderTransportFigures = ProviderTransportFigures()) {
        _ = shedCounter(provider: provider)
        transportExports.withLock { $0.append(TransportExport(provider: provider, figures: transport, exported: [:])) }
    }

    /// A provider's transport figures and what of them the registry's counters already hold.
    private struct TransportExport {
        let provider: String
        let figures: ProviderTransportFigures
        var exported: [TransportCounter: Int]
    }

    /// The transport counters, each read from a provider's figures at a scrape.
    private enum TransportCounter: CaseIterable {
        case resentNotProcessed, resentProviderRetry, possiblyDelivered, rotated, dead

        var name: String {
            switch self {
            case .resentNotProcessed, .resentProviderRetry: "pushrelay_provider_resends_total"
            case .possiblyDelivered: "pushrelay_provider_possibly_delivered_total"
            case .rotated: "pushrelay_provider_connections_rotated_total"
            case .dead: "pushrelay_provider_connections_dead_total"
            }
        }

        var reason: ProviderTransportFigures.ResendReason? {
            switch self {
            case .resentNotProcessed: .notProcessed
            case .resentProviderRetry: .providerRetry
            default: nil
            }
        }

        var help: String {
            switch self {
            case .resentNotProcessed, .resentProviderRetry:
                "Requests sent to a provider again, by provider instance and reason: not_processed (REFUSED_STREAM, or above a GOAWAY's last stream id), provider_retry (429, 5xx, a connection that never opened, after a backoff)."
            case .possiblyDelivered:
                "Requests written to a provider that lost their answer (connection closed or dead, stream reset, deadline): answered as failed and never sent again, as the provider may have delivered them."
            case .rotated:
                "Provider connections that the provider ended with a GOAWAY (their requests finished on them; new ones went to a new connection)."
            case .dead: "Provider connections found dead: silent with requests waiting, a PING unanswered."
            }
        }

        func read(_ f: ProviderTransportFigures) -> Int {
            switch self {
            case .resentNotProcessed: f.resends(.notProcessed)
            case .resentProviderRetry: f.resends(.providerRetry)
            case .possiblyDelivered: f.possiblyDeliveredTotal
            case .rotated: f.connectionsRotated
            case .dead: f.connectionsDead
            }
        }
    }

    /// Brings the transport counters up to the figures.
    private func exportTransport() {
        transportExports.withLock { exports in
            for i in exports.indices {
                for counter in TransportCounter.allCases {
                    let value = counter.read(exports[i].figures)
                    let delta = value - exports[i].exported[counter, default: 0]
                    let made = registry.makeCounter(
                        name: counter.name,
                        labels: [("provider", exports[i].provider)] + (counter.reason.map { [("reason", $0.rawValue)] } ?? []),
                        help: counter.help
                    )
                    if delta > 0 { made.increment(by: Int64(delta)) }
                    exports[i].exported[counter] = value
                }
            }
        }
    }

    private func shedCounter(provider: String) -> Counter {
        registry.makeCounter(
            name: "pushrelay_deliveries_shed_total",
            labels: [("provider", provider)],
            help: "Dispatches refused (503 ProviderBusy) after waiting delivery.max_wait_ms for a place at the provider instance's in-flight bound."
        )
    }

    /// Rows deleted by one pruning step (expired usage days, delivery-log rows and dead tokens).
    package func recordPruned(_ rows: Int) {
        prunedRows.increment(by: Int64(rows))
    }

    private var prunedRows: Counter {
        registry.makeCounter(
            name: "pushrelay_pruned_rows_total",
            labels: [],
            help: "Rows deleted by pruning: usage days and delivery-log rows older than quota.retention_days, and expired dead tokens."
        )
    }

    /// A dispatch answered 503 because its quota reservation did not commit within its share of the delivery deadline.
    package func recordStorageTimeout() {
        storageTimeouts.increment()
    }

    private var storageTimeouts: Counter {
        registry.makeCounter(
            name: "pushrelay_storage_timeouts_total",
            labels: [],
            help:
                "Dispatches answered 503 StorageBusy: the quota reservation did not commit within its share of delivery.deadline_ms (nothing was sent)."
        )
    }

    /// The Prometheus text exposition of everything recorded, and of `gauges`, each read now.
    package func render(gauges: [Probe] = []) -> [UInt8] {
        exportTransport()
        for g in gauges {
            registry.makeGauge(name: g.name, labels: [], help: g.help).set(g.read())
        }
        return registry.emitToBuffer()
    }
}
