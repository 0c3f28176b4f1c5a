/// The quota rules: which limit applies to a token, which notifications are exempt, and what a counted request does.
public struct QuotaPolicy: Sendable {
    /// `quota.daily_limit`: successful deliveries per token per UTC day.
    public var dailyLimit: Int
    /// `quota.app_limits`: the first matching app-id glob sets the limit (exact ids win over globs).
    public var appLimits: [(pattern: String, limit: Int)]
    /// `quota.exempt_commands`: device commands bypass the limit and touch no counter.
    public var exemptCommands: Bool
    /// `quota.exempt_critical`: critical alerts bypass the limit and touch no counter.
    public var exemptCritical: Bool

    private let compiled: [(glob: Glob, exact: Bool, limit: Int)]

    public init(dailyLimit: Int = 500, appLimits: [(pattern: String, limit: Int)] = [], exemptCommands: Bool = true, exemptCritical: Bool = true) {
        self.dailyLimit = dailyLimit
        self.appLimits = appLimits
        self.exemptCommands = exemptCommands
        self.exemptCritical = exemptCritical
        self.compiled = appLimits.map { (Glob($0.pattern), !$0.pattern.contains(where: { $0 == "*" || $0 == "?" }), $0.limit) }
    }

    /// The limit for a token: its stored override, else the app's limit, else the default.
    public func maximum(appID: String?, override: Int?) -> Int {
        if let override { return override }
        if let appID {
            if let exact = compiled.first(where: { $0.exact && $0.glob.matches(appID) }) { return exact.limit }
            if let glob = compiled.first(where: { !$0.exact && $0.glob.matches(appID) }) { return glob.limit }
        }
        return dailyLimit
    }

    /// Whether a translated notification bypasses the quota.
    public func isExempt(_ n: TranslatedNotification) -> Bool {
        (exemptCommands && n.command != nil) || (exemptCritical && n.isCritical)
    }
}

/// What a counted request does to the day's counters. `decide` is the rule: SQLite runs it inside its transaction, and
/// PostgreSQL's reservation statement is its transliteration into SQL (the storage contract tests hold each engine's
/// decisions to `decide` on the same state).
public struct QuotaDecision: Sendable, Equatable {
    /// The request may be delivered: a slot is reserved (counted as successful until the outcome says otherwise).
    public var allowed: Bool
    /// This refusal is the token's first of the day: send it the one "rate limited" notice.
    public var sendNotice: Bool
    /// Counters after the request.
    public var counters: UsageCounters
    /// Whether the notice has now been sent today.
    public var noticeSent: Bool

    /// A decision as an engine reports it after running the rule in its own statement. Anything else gets its
    /// decision from `decide`.
    public init(allowed: Bool, sendNotice: Bool, counters: UsageCounters, noticeSent: Bool) {
        self.allowed = allowed
        self.sendNotice = sendNotice
        self.counters = counters
        self.noticeSent = noticeSent
    }

    /// Only successful deliveries gate: refused when `successful >= maximum`. Every counted request is an attempt.
    public static func decide(current: UsageCounters, maximum: Int, noticeSent: Bool) -> QuotaDecision {
        var c = current
        c.attempts += 1
        if c.successful < maximum {
            c.successful += 1
            return QuotaDecision(allowed: true, sendNotice: false, counters: c, noticeSent: noticeSent)
        }
        return QuotaDecision(allowed: false, sendNotice: !noticeSent, counters: c, noticeSent: true)
    }
}
