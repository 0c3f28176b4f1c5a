import PushRelayCore
import Synchronization

/// A live subscription: one connection's channel for one webhook id.
package final class PushChannelSubscription: Sendable {
    package let connection: PushChannelConnection
    /// The subscribe command's id: events carry it.
    package let id: Int64
    package let webhookID: String
    /// Set for push-token credentials: only notifications for this token are delivered here.
    package let pushToken: String?
    package let supportConfirm: Bool
    package let fallback: Bool
    /// Set once the channel is replaced, unsubscribed or disconnected; `PushChannelConfirmations` sets and reads it
    /// under its lock, so that no message is tracked on a channel after its messages were taken away.
    package let ended = Atomic<Bool>(false)

    package init(connection: PushChannelConnection, id: Int64, webhookID: String, pushToken: String?, supportConfirm: Bool, fallback: Bool) {
        self.connection = connection
        self.id = id
        self.webhookID = webhookID
        self.pushToken = pushToken
        self.supportConfirm = supportConfirm
        self.fallback = fallback
    }

    /// Whether a notification belongs on this channel: it carries the channel's webhook id and, on a push-token
    /// channel, its push token too. A push token alone never selects a channel: a stranger who knows a device's
    /// token and subscribes with it under a webhook id of their own receives only what is posted with that pair.
    package func accepts(_ n: HANotification) -> Bool {
        guard n.registrationInfo.webhookID == webhookID else { return false }
        if let pushToken { return pushToken == n.pushToken }
        return true
    }

    /// The websocket event that carries `n` on this channel; with a confirm id when the app must confirm it.
    package func event(_ n: HANotification, confirmID: String?) -> String {
        PushChannelWire.event(subscription: id, PushChannelWire.notificationEvent(n, confirmID: confirmID))
    }
}
