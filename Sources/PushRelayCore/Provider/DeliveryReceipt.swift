/// A provider accepted the notification.
public struct DeliveryReceipt: Sendable, Equatable {
    /// The provider's own message id (FCM `name`, APNs `apns-id`, or `sandbox:<uuid>`).
    public var messageID: String
    /// What was sent upstream (Home Assistant gets it back as `sentPayload`).
    public var sentPayload: JSONValue
    /// What the delivery log keeps of this delivery, if anything (`delivery_log.payload`). Providers that reach a
    /// device leave it nil; a provider whose only output is the log (the sandbox) sets it.
    public var logged: JSONValue?

    public init(messageID: String, sentPayload: JSONValue, logged: JSONValue? = nil) {
        self.messageID = messageID
        self.sentPayload = sentPayload
        self.logged = logged
    }
}
