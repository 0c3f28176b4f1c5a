import PushRelayCore

extension PushRelayConfig {
    /// `quota:`: the daily quota of notifications per device and what it exempts.
    public struct Quota: Sendable {
        public init() {}
        public var dailyLimit = 500
        public var appLimits: [(pattern: String, limit: Int)] = []
        public var exemptCommands = true
        public var exemptCritical = true
        public var retentionDays = 30
    }

    static let quotaKeys: [ConfigKey] = ["daily_limit", "app_limits", "exempt_commands", "exempt_critical", "retention_days"]

    /// The quota rules the ledger applies, from `quota:`.
    public var quotaPolicy: QuotaPolicy {
        QuotaPolicy(
            dailyLimit: quota.dailyLimit,
            appLimits: quota.appLimits,
            exemptCommands: quota.exemptCommands,
            exemptCritical: quota.exemptCritical
        )
    }
}

extension PushRelayConfig.Quota {
    /// Reads `quota.*` over the defaults; `quota.app_limits` (app-id glob → daily limit) comes out sorted by glob.
    package init(reading r: ConfigTreeReader) throws {
        self.init()
        if let v = try r.int("quota.daily_limit", range: 0...10_000_000) { dailyLimit = v }
        if let v = try r.bool("quota.exempt_commands") { exemptCommands = v }
        if let v = try r.bool("quota.exempt_critical") { exemptCritical = v }
        if let v = try r.int("quota.retention_days", range: 1...3650) { retentionDays = v }
        if let limits = try r.object("quota.app_limits") {
            appLimits = try limits.keys.sorted().map { pattern in
                guard case .int(let n)? = limits[pattern], n >= 0, n <= 10_000_000 else {
                    throw ConfigError(key: "quota.app_limits.\(pattern)", problem: "must be a whole number from 0 to 10000000")
                }
                return (pattern, Int(n))
            }
        }
    }
}
