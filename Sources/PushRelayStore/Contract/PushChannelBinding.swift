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
}
