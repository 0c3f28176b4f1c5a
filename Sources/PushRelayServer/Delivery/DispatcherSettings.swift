import Foundation
import PushRelayCore

/// What the dispatcher runs with: the deadline, the dead-token memory, each provider's in-flight bound, retries and
/// circuit breaker. The application builds it from `delivery:`.
struct DispatcherSettings: Sendable {
    /// Each dispatch's deadline, waits and retries included.
    var deadlineMs: Int
    /// How long a token a provider reported as dead is answered without calling the provider.
    var deadTokenTTL: TimeInterval
    /// Deliveries in flight per provider instance; past it a dispatch waits for a place, for `maxWait` at most.
    var maxInFlight: Int
    var maxWait: Duration
    /// Retries of transient failures.
    var retry: RetryPolicy
    /// The circuit breaker of each provider instance; nil: none.
    var breaker: CircuitBreakerState.Settings?
}
