/// The seam every provider implements: send one translated notification, and close when the server stops.
///
/// A provider only moves bytes and maps the answer to a typed outcome; quotas, retries, deadlines and the delivery
/// log are the dispatcher's (every provider goes through the same pipeline).
public protocol PushProvider: Sendable {
    /// The configured instance name (`providers.<name>`).
    var name: String { get }
    /// Sends one notification. Throws the typed reason when the provider did not take it.
    func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt
    /// Releases connections. Called once, after the last delivery.
    func shutdown() async
    /// What its connections did (resends, rotations, dead connections), for `/metrics`; nil for a provider without
    /// connections of its own.
    var transportFigures: ProviderTransportFigures? { get }
}

extension PushProvider {
    public func shutdown() async {}
    public var transportFigures: ProviderTransportFigures? { nil }
}
