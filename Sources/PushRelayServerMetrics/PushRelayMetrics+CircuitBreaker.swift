import Prometheus

extension PushRelayMetrics {
    /// The states a breaker changes to (the `to` label).
    static let circuitTransitions = ["open", "closed"]

    /// A provider's circuit breaker: whether it is open now, and (with `transition`) one more change to `open` or `closed`.
    /// Without a `transition` (the breaker starting), both transition counters are exported at 0, so that a panel or an
    /// alert on them sees the series before the first change.
    package func recordCircuit(provider: String, open: Bool, transition: String?) {
        registry.makeGauge(
            name: "pushrelay_provider_circuit_open",
            labels: [("provider", provider)],
            help: "1 while the provider instance's circuit breaker refuses deliveries, else 0."
        ).set(open ? 1.0 : 0.0)
        if let transition {
            transitionCounter(provider: provider, to: transition).increment()
        } else {
            for to in Self.circuitTransitions { _ = transitionCounter(provider: provider, to: to) }
        }
    }

    private func transitionCounter(provider: String, to: String) -> Counter {
        registry.makeCounter(
            name: "pushrelay_provider_circuit_transitions_total",
            labels: [("provider", provider), ("to", to)],
            help: "Circuit breaker changes by provider instance and new state."
        )
    }
}
