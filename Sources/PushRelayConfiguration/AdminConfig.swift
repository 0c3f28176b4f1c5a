extension PushRelayConfig {
    static let adminKeys: [ConfigKey] = ["token"]

    /// Reads `admin.token`: at least 16 characters; empty or not set, nil (the admin API is off).
    package static func adminToken(reading r: ConfigTreeReader) throws -> String? {
        guard let v = try r.string("admin.token"), !v.isEmpty else { return nil }
        guard v.count >= 16 else {
            throw ConfigError(key: "admin.token", problem: "must be at least 16 characters (or empty to disable the admin API)")
        }
        return v
    }
}
