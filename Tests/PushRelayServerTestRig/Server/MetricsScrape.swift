/// Reading a `GET /metrics` answer (Prometheus text).
package enum MetricsScrape {
    /// The lines of `text` that are samples of the metric `name` (with labels or without).
    package static func lines(_ text: String, _ name: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
    }
}
