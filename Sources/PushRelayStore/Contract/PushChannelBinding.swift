import PushRelayCore

/// A push token and the webhook id Home Assistant sends it with: the one pair allowed to open a push-token channel.
public struct PushChannelBinding: Sendable, Hashable, CustomStringConvertible {
    public var pushToken: String
    public var webhookID: String

    public init(pushToken: String, webhookID: String) {
        self.pushToken = pushToken
        self.webhookID = webhookID
    }

    /// Both halves shortened (`TokenDisplay.short`), as logs show them: the push token and the webhook id are both
    /// secrets.
    public var description: String { "\(TokenDisplay.short(pushToken)) ↔ \(TokenDisplay.short(webhookID))" }

    /// Whether both halves are within `FieldLimits` (push token `FieldLimits.token`, webhook id
    /// `FieldLimits.identifier` UTF-8 bytes): only such a pair is stored.
    public var isWithinLimits: Bool {
        pushToken.utf8.count <= FieldLimits.token && webhookID.utf8.count <= FieldLimits.identifier
    }

    /// A pair past `FieldLimits`, refused by `PushChannelStorage.bind` before anything is written.
    public struct TooLong: Error, Sendable, Equatable, CustomStringConvertible {
        public var pushTokenBytes: Int
        public var webhookIDBytes: Int

        public init(_ binding: PushChannelBinding) {
            pushTokenBytes = binding.pushToken.utf8.count
            webhookIDBytes = binding.webhookID.utf8.count
        }

        public var description: String {
            "a channel binding's push token (\(pushTokenBytes) bytes) or webhook id (\(webhookIDBytes) bytes) is longer than PushRelay stores (\(FieldLimits.token) and \(FieldLimits.identifier) bytes)"
        }
    }
}
