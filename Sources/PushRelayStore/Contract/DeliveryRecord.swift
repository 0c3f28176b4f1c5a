import Foundation
import PushRelayCore

/// How a delivery ended, for the ledger and the delivery log.
public struct DeliveryRecord: Sendable {
    public var at: Date
    public var pushToken: String
    public var appID: String?
    public var platform: DeliveryPlatform?
    public var provider: String
    public var kind: DeliveryKind
    public var counted: Bool
    public var outcome: DeliveryOutcomeClass
    public var messageID: String?
    public var errorMessage: String?
    /// The upstream payload, kept for sandbox deliveries.
    public var payload: String?

    public init(
        at: Date,
        pushToken: String,
        appID: String?,
        platform: DeliveryPlatform?,
        provider: String,
        kind: DeliveryKind,
        counted: Bool,
        outcome: DeliveryOutcomeClass,
        messageID: String? = nil,
        errorMessage: String? = nil,
        payload: String? = nil
    ) {
        self.at = at
        self.pushToken = pushToken
        self.appID = appID
        self.platform = platform
        self.provider = provider
        self.kind = kind
        self.counted = counted
        self.outcome = outcome
        self.messageID = messageID
        self.errorMessage = errorMessage
        self.payload = payload
    }
}
