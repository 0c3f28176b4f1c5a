extension PushRelayConfig {
    static let securityKeys: [ConfigKey] = ["max_failed_auths_per_minute"]

    /// Reads `security.max_failed_auths_per_minute`, or its older name `channel.max_failed_auths_per_minute` (the new
    /// name wins when both are set). Nil when neither is.
    package static func maxFailedAuthsPerMinute(reading r: ConfigTreeReader) throws -> Int? {
        let old = try r.int("channel.max_failed_auths_per_minute", range: 1...100_000)
        return try r.int("security.max_failed_auths_per_minute", range: 1...100_000) ?? old
    }
}
