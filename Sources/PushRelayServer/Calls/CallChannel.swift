import Logging
import PushRelayCore
import PushRelayStore

/// Rings a call on the device's websocket channel, as SignalWire does: no push while the device has a live channel
/// that confirms (`support_confirm`). The invite goes out as an event with `type: "call_invite"` and a
/// `hass_confirm_id`; without a confirm in `calls.channel_confirm_timeout_ms` the caller sends the push after all.
struct CallChannel: Sendable {
    let channels: LocalPushChannels
    let bindings: LocalPushBindingRegistry
    let invites: CallInviteWaiters
    let confirmTimeout: Duration
    let logger: Logger

    /// True when the device confirmed the invite on its channel in time.
    func ring(_ invite: CallInvite, device: CallDevice) async -> Bool {
        guard let sub = channels.subscription(pushToken: device.pushToken, webhookID: device.webhookID), sub.supportConfirm else { return false }
        // A channel opened with a channel token serves a webhook id, not a token: ring there only when Home Assistant
        // has bound the device's push token to that webhook id (an API key holder cannot name someone else's).
        if sub.pushToken == nil, await bindings.verdict(pushToken: device.pushToken, webhookID: sub.webhookID) != .bound { return false }
        let confirmID = RandomID.hex128()
        guard case .object(var event) = invite.payload else { return false }
        event["hass_confirm_id"] = .string(confirmID)
        let text = LocalPushWire.event(subscription: sub.id, .object(event))
        if await invites.deliver(text, id: confirmID, on: sub, timeout: confirmTimeout) { return true }
        logger.info("call invite not confirmed on the websocket channel; sending the push", metadata: ["device": .string(device.id)])
        return false
    }
}
