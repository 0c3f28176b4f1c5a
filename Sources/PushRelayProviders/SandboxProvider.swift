import Foundation
import Logging
import PushRelayCore

/// `type: sandbox`: never touches the network. Every delivery is answered with a `sandbox:<uuid>` message id, and what
/// it would have sent is kept in the delivery log (`DeliveryReceipt.logged`), so a new install can be exercised end to
/// end offline. It goes through the same pipeline as every other provider.
public struct SandboxProvider: ConfiguredProvider {
    /// A sandbox provider has no options.
    public struct Configuration: ProviderConfiguration {
        /// Refuses any option: a sandbox provider has none.
        public init(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
            if let extra = options.keys.sorted().first { throw ProviderConfigError(key: extra, problem: "unknown key for a sandbox provider") }
        }
    }

    public let name: String

    public init(name: String = "sandbox") {
        self.name = name
    }

    /// The sandbox sends nothing, so it needs neither a clock nor a logger.
    public init(name: String, configuration: Configuration, clock: any TimePort, logger: Logger?) {
        self.init(name: name)
    }

    public func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt {
        let payload = delivery.notification.fcmMessage
        return DeliveryReceipt(messageID: "sandbox:\(RandomID.uuid())", sentPayload: payload, logged: payload)
    }
}
