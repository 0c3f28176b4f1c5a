import Prometheus

extension PushRelayMetrics {
    /// A provider's circuit breaker: whether it is open now, and (with `transition`) one more change to `open` or `closed`.
    func recordCircuit(provider: String, open: Bool, transition: String?) {
        registry.makeGauge(
            name: "pushrelay_provider_circuit_open",
            labels: [("provider", provider)],
            help: "1 while the provider instance's circuit breaker refuses deliveries, else 0."
        ).set(open ? 1.0 : 0.0)
        if let transition {
            registry.makeCounter(
                name: "pushrelay_provider_circuit_transitions_total",
                labels: [("provider", provider), ("to", transition)],
                help: "Circuit breaker changes by provider instance and new state."
            ).increment()
        }
    }
}
