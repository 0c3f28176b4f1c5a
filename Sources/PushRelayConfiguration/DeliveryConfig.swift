import Foundation
import PushRelayCore

/// `delivery.*`: the delivery pipeline's settings (`Dispatcher`): the deadline, the in-flight bound, retries and the
/// circuit breaker.
public struct DeliverySettings: Sendable {
    public init() {}
    /// Each Home Assistant request's delivery deadline (under Home Assistant's 10 s timeout).
    public var deadlineMs = 8000
    /// How long a token a provider reported as dead is answered 410 without calling the provider.
    public var deadTokenTTLms: Int64 = 7 * 86_400_000
    /// Deliveries in flight per provider instance; past it a dispatch waits for a place, for `maxWaitMs` at most.
    public var maxInFlight = 256
    /// How long a dispatch may wait for a place at its provider's in-flight bound before it is refused (503
    /// `ProviderBusy`); the wait counts toward `deadlineMs`. Half of `deadlineMs` unless set.
    public var maxWaitMs = 4000
    /// Retries of transient failures: first backoff and attempts in total.
    public var retryBaseMs = 100
    public var maxAttempts = 4
    /// The circuit breaker per provider instance: `delivery.breaker_failure_ratio` of at least
    /// `delivery.breaker_min_requests` deliveries within `delivery.breaker_window` failing transiently opens it for
    /// `delivery.breaker_cool_down` (0: no breaker).
    public var breakerFailureRatio = 0.5
    public var breakerMinRequests = 20
    public var breakerWindowMs: Int64 = 30_000
    public var breakerCoolDownMs: Int64 = 30_000

    public var breaker: CircuitBreakerState.Settings? {
        guard breakerCoolDownMs > 0 else { return nil }
        return CircuitBreakerState.Settings(
            failureRatio: breakerFailureRatio,
            minimumRequests: breakerMinRequests,
            window: TimeInterval(breakerWindowMs) / 1000,
            coolDown: TimeInterval(breakerCoolDownMs) / 1000,
            probeTimeout: max(TimeInterval(deadlineMs) / 1000 * 2, 1)
        )
    }

    public var retryPolicy: RetryPolicy { RetryPolicy(baseDelayMs: retryBaseMs, maxDelayMs: max(retryBaseMs, 2000), maxAttempts: maxAttempts) }
}

extension PushRelayConfig {
    static let deliveryKeys: [ConfigKey] = [
        "deadline_ms", "dead_token_ttl", "max_in_flight", "max_wait_ms", "retry_base_ms", "max_attempts", "breaker_failure_ratio",
        "breaker_min_requests", "breaker_window", "breaker_cool_down",
    ]
}

extension DeliverySettings {
    /// Reads `delivery.*` over the defaults.
    ///
    /// - Parameter requestTimeoutMs: `http.request_timeout`, which must be longer than the deadline (an answer may
    ///   wait for a delivery); refused here, naming `http.request_timeout`, as soon as the deadline is known.
    package init(reading r: ConfigTreeReader, requestTimeoutMs: Int64) throws {
        self.init()
        if let v = try r.int("delivery.deadline_ms", range: 100...60_000) { deadlineMs = v }
        if let v = try r.double("delivery.breaker_failure_ratio") {
            guard v > 0, v <= 1 else { throw ConfigError(key: "delivery.breaker_failure_ratio", problem: "must be a number above 0 and at most 1") }
            breakerFailureRatio = v
        }
        if let v = try r.int("delivery.breaker_min_requests", range: 1...1_000_000) { breakerMinRequests = v }
        if let ms = try r.durationMs("delivery.breaker_window") {
            guard ms >= 1000 else { throw ConfigError(key: "delivery.breaker_window", problem: "must be at least 1s") }
            breakerWindowMs = ms
        }
        if let ms = try r.durationMs("delivery.breaker_cool_down") { breakerCoolDownMs = ms }
        if requestTimeoutMs <= Int64(deadlineMs) {
            throw ConfigError(
                key: "http.request_timeout",
                problem: "must be longer than delivery.deadline_ms (\(deadlineMs) ms), which an answer may wait for"
            )
        }
        if let ms = try r.durationMs("delivery.dead_token_ttl") { deadTokenTTLms = ms }
        if let v = try r.int("delivery.max_in_flight", range: 1...100_000) { maxInFlight = v }
        maxWaitMs = deadlineMs / 2
        if let v = try r.int("delivery.max_wait_ms", range: 0...60_000) {
            guard v < deadlineMs else {
                throw ConfigError(
                    key: "delivery.max_wait_ms",
                    problem: "must be shorter than delivery.deadline_ms (\(deadlineMs) ms), which the wait is part of"
                )
            }
            maxWaitMs = v
        }
        if let v = try r.int("delivery.retry_base_ms", range: 1...10_000) { retryBaseMs = v }
        if let v = try r.int("delivery.max_attempts", range: 1...10) { maxAttempts = v }
    }
}
