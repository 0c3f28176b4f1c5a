import Foundation
import PushRelayCore

/// `type: sandbox`: never touches the network. Every would-be delivery is answered with a `sandbox:<uuid>` message id
/// and recorded (with its payload) in the delivery log, so a new install can be exercised end to end offline.
public struct SandboxProvider: PushProvider {
    public let name: String

    public init(name: String = "sandbox") {
        self.name = name
    }

    /// The sandbox keeps what it would have sent in the delivery log.
    public var recordsPayload: Bool { true }

    public var isLocal: Bool { true }

    public func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        DeliveryReceipt(messageID: "sandbox:\(RandomID.uuid())", sentPayload: delivery.notification.fcmMessage)
    }
}
