import Foundation

/// Delivery latency per provider since the process started, read from the `pushrelay_delivery_duration_seconds`
/// histogram of `/metrics` (so only with `metrics.enabled`). Percentiles are bucket upper bounds: "p99 ≤ 0.25 s".
package struct DeliveryLatency: Sendable, Equatable {
    package var provider: String
    package var count: Int
    /// Upper bounds in seconds; nil when the percentile lies past the largest finite bucket.
    package var p50: Double?
    package var p90: Double?
    package var p99: Double?

    package static let metric = "pushrelay_delivery_duration_seconds"

    /// Reads the histogram's `_bucket` lines out of a Prometheus text exposition.
    package static func parse(_ exposition: String) -> [DeliveryLatency] {
        var buckets: [String: [(le: Double, count: Int)]] = [:]
        for line in exposition.split(separator: "\n") where line.hasPrefix(metric + "_bucket{") {
            guard let open = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}") else { continue }
            let labels = labelMap(line[line.index(after: open)..<close])
            let value = line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)
            guard let provider = labels["provider"], let leText = labels["le"], let count = Double(value) else { continue }
            let le = leText == "+Inf" ? Double.infinity : Double(leText)
            guard let le else { continue }
            buckets[provider, default: []].append((le, Int(count)))
        }
        return buckets.map { provider, list in
            let sorted = list.sorted { $0.le < $1.le }
            let total = sorted.last?.count ?? 0
            func percentile(_ q: Double) -> Double? {
                let needed = Double(total) * q
                guard let b = sorted.first(where: { Double($0.count) >= needed }), b.le.isFinite else { return nil }
                return b.le
            }
            return DeliveryLatency(provider: provider, count: total, p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99))
        }.filter { $0.count > 0 }.sorted { $0.provider < $1.provider }
    }

    /// `a="x",b="y"` → ["a": "x", "b": "y"] (values without escaped quotes: provider names and bucket bounds).
    private static func labelMap(_ text: Substring) -> [String: String] {
        var map: [String: String] = [:]
        for pair in text.split(separator: ",") {
            guard let eq = pair.firstIndex(of: "=") else { continue }
            let key = pair[..<eq].trimmingCharacters(in: .whitespaces)
            var value = pair[pair.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            map[key] = value
        }
        return map
    }
}
