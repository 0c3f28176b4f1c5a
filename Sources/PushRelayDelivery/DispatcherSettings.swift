import Foundation
import PushRelayCore

/// What the dispatcher runs with: the deadline, the dead-token memory, each provider's in-flight bound, retries and
/// circuit breaker. The application builds it from `delivery:`.
package struct DispatcherSettings: Sendable {
    /// Each dispatch's deadline, waits and retries included.
    package var deadlineMs: Int
    /// How long a token a provider reported as dead is answered without calling the provider.
    package var deadTokenTTL: TimeInterval
    /// Deliveries in flight per provider instance; past it a dispatch waits for a place, for `maxWait` at most.
    package var maxInFlight: Int
    package var maxWait: Duration
    /// Retries of transient failures.
    package var retry: RetryPolicy
    /// The circuit breaker of each provider instance; nil: none.
    package var breaker: CircuitBreakerState.Settings?

    package init(
        deadlineMs: Int,
        deadTokenTTL: TimeInterval,
        maxInFlight: Int,
        maxWait: Duration,
        retry: RetryPolicy,
        breaker: CircuitBreakerState.Settings?
    ) {
        self.deadlineMs = deadlineMs
        self.deadTokenTTL = deadTokenTTL
        self.maxInFlight = maxInFlight
        self.maxWait = maxWait
        self.retry = retry
        self.breaker = breaker
    }
}
