import PushRelayConfiguration
import PushRelayDelivery
extension DispatcherSettings {
    /// The dispatcher's settings from `delivery:`.
    init(_ delivery: DeliverySettings) {
        self.init(
            deadlineMs: delivery.deadlineMs,
            deadTokenTTL: Double(delivery.deadTokenTTLms) / 1000,
            maxInFlight: delivery.maxInFlight,
            maxWait: .milliseconds(delivery.maxWaitMs),
            retry: delivery.retryPolicy,
            breaker: delivery.breaker
        )
    }
}
