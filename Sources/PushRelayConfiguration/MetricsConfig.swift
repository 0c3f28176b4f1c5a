extension PushRelayConfig {
    static let metricsKeys: [ConfigKey] = ["enabled"]

    /// Reads `metrics.enabled`; nil when not set.
    package static func metricsEnabled(reading r: ConfigTreeReader) throws -> Bool? {
        try r.bool("metrics.enabled")
    }
}
