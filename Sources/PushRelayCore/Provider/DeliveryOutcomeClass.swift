/// How a delivery ended, as the delivery log (`delivery_log.outcome`), the metrics (`outcome` label) and the console
/// name it: delivered, or the class of its failure.
public enum DeliveryOutcomeClass: String, Sendable, CaseIterable {
    case delivered
    case invalidToken = "invalid_token"
    case payloadTooLarge = "payload_too_large"
    case invalidPayload = "invalid_payload"
    case invalidTarget = "invalid_target"
    case transient
    case configuration

    /// The class of a delivery's result.
    public init(_ result: Result<DeliveryReceipt, DeliveryFailure>) {
        switch result {
        case .success: self = .delivered
        case .failure(.invalidToken): self = .invalidToken
        case .failure(.payloadTooLarge): self = .payloadTooLarge
        case .failure(.invalidPayload): self = .invalidPayload
        case .failure(.invalidTarget): self = .invalidTarget
        case .failure(.transient), .failure(.throttled): self = .transient
        case .failure(.configuration): self = .configuration
        }
    }
}
