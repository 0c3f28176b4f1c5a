import Logging
import PushRelayCore
import PushRelayPushChannel
import PushRelayStore

/// Rings a call on the device's push channel, as SignalWire does: no push while the device has a live channel
/// that confirms (`support_confirm`). The invite goes out as an event with `type: "call_invite"` and a
/// `hass_confirm_id`; without a confirm in `calls.channel_confirm_timeout_ms` the caller sends the push after all.
package struct CallChannel: Sendable {
    package let pushChannel: any PushChannelPort
    package let confirmTimeout: Duration
    package let logger: Logger

    package init(pushChannel: any PushChannelPort, confirmTimeout: Duration, logger: Logger) {
        self.pushChannel = pushChannel
        self.confirmTimeout = confirmTimeout
        self.logger = logger
    }

    /// True when the device confirmed the invite on its channel in time.
    package func ring(_ invite: CallInvite, device: CallDevice) async -> Bool {
        guard case .object(let event) = invite.payload else { return false }
        if await pushChannel.deliverConfirmed(event, pushToken: device.pushToken, webhookID: device.webhookID, timeout: confirmTimeout) {
            return true
        }
        logger.info("call invite not confirmed on the push channel; sending the push", metadata: ["device": .string(device.id)])
        return false
    }
}
