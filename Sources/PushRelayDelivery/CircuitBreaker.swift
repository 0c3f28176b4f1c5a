import Foundation
import Logging
import PushRelayCore
import PushRelayServerMetrics

/// One provider instance's circuit breaker (rules in `CircuitBreakerState`): a provider failing most deliveries is
/// not called for a cool-down, and the dispatches meanwhile get a fast 503 with `Retry-After`, counted nowhere. State
/// changes are logged once each and shown in `/metrics`.
final class CircuitBreaker: Sendable {
    let provider: String
    private let state: Locked<CircuitBreakerState>
    private let clock: any TimePort
    private let metrics: PushRelayMetrics?
    private let logger: Logger

    init(provider: String, settings: CircuitBreakerState.Settings, clock: any TimePort, metrics: PushRelayMetrics?, logger: Logger) {
        self.provider = provider
        self.state = Locked(CircuitBreakerState(settings: settings))
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        metrics?.recordCircuit(provider: provider, open: false, transition: nil)
    }

    /// Nil if the delivery may go ahead; otherwise why not (a transient failure with `Retry-After`).
    func admit() -> DeliveryFailure? {
        let now = clock.now()
        switch state.withLock({ $0.admit(now: now) }) {
        case .allow:
            return nil
        case .probe:
            logger.notice("circuit half-open: probing the provider", metadata: ["provider": .string(provider)])
            return nil
        case .refuse(let retryAfter, let failures, let requests):
            return .transient(
                reason: "ProviderCircuitOpen",
                message:
                    "Provider '\(provider)' failed \(failures) of \(requests) recent deliveries, so PushRelay stopped calling it for now (circuit breaker); it tries again in \(retryAfter) s.",
                retryAfterSeconds: retryAfter
            )
        }
    }

    /// Reports how a delivery that `admit` let through went.
    func record(_ result: Result<DeliveryReceipt, DeliveryFailure>) {
        let report: CircuitBreakerState.Report
        // A destination the caller chose that cannot be reached (a WebPush host that does not resolve) says nothing
        // about the provider; counting it would let anyone open the breaker for every device.
        if case .failure(let failure) = result, failure.isUnreachableDestination { return }
        switch result {
        case .success, .failure(.invalidToken), .failure(.invalidPayload), .failure(.invalidTarget), .failure(.payloadTooLarge),
            .failure(.throttled):
            // One target's problem (a dead or throttled device, a bad payload): the provider itself answered.
            report = .healthy
        case .failure(.transient):
            report = .failed
        case .failure(.configuration):
            return  // our side's problem, not the provider's health
        }
        let now = clock.now()
        guard let transition = state.withLock({ $0.record(report, now: now) }) else { return }
        switch transition {
        case .opened(let failures, let requests):
            logger.error(
                "circuit open: provider failing, deliveries refused for the cool-down",
                metadata: ["provider": .string(provider), "failures": .stringConvertible(failures), "requests": .stringConvertible(requests)]
            )
            metrics?.recordCircuit(provider: provider, open: true, transition: "open")
        case .closed:
            logger.notice("circuit closed: the provider answers again", metadata: ["provider": .string(provider)])
            metrics?.recordCircuit(provider: provider, open: false, transition: "closed")
        }
    }
}
