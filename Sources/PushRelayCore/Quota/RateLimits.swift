import Foundation

/// A token's counters for one UTC day.
public struct UsageCounters: Sendable, Equatable, Codable {
    /// Every counted request, refused ones included.
    public var attempts: Int
    /// Deliveries that succeeded (or hold a reserved slot while the provider is being called).
    public var successful: Int
    /// Deliveries that failed.
    public var errors: Int

    public init(attempts: Int = 0, successful: Int = 0, errors: Int = 0) {
        self.attempts = attempts
        self.successful = successful
        self.errors = errors
    }

    public var total: Int { successful + errors }
}

/// The `rateLimits` object of every Home Assistant response.
public struct RateLimits: Sendable, Equatable, Codable {
    public var attempts: Int
    public var successful: Int
    public var errors: Int
    public var total: Int
    public var maximum: Int
    public var remaining: Int
    /// Next UTC midnight, ISO-8601 with milliseconds and `Z`.
    public var resetsAt: String

    public init(counters: UsageCounters, maximum: Int, day: UTCDay) {
        attempts = counters.attempts
        successful = counters.successful
        errors = counters.errors
        total = counters.total
        self.maximum = maximum
        remaining = max(0, maximum - counters.successful)
        resetsAt = ISO8601UTC.string(day.nextMidnight)
    }
}
