import Foundation
import PushRelayCore

/// `type: sandbox`: never touches the network. Every delivery is answered with a `sandbox:<uuid>` message id, and what
/// it would have sent is kept in the delivery log (`DeliveryReceipt.logged`), so a new install can be exercised end to
/// end offline. It goes through the same pipeline as every other provider.
public struct SandboxProvider: PushProvider {
    public let name: String

    public init(name: String = "sandbox") {
        self.name = name
    }

    public func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        let payload = delivery.notification.fcmMessage
        return DeliveryReceipt(messageID: "sandbox:\(RandomID.uuid())", sentPayload: payload, logged: payload)
    }
}
