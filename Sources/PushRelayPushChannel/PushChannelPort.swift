import PushRelayCore

/// What the push channel offers the features that deliver over it: Home Assistant's notifications
/// (`HomeAssistantService`) and call invites (`CallChannel`). They use the channel through this port and nothing else;
/// the channel knows neither of them. `PushChannelHub` is the one implementation.
package protocol PushChannelPort: Sendable {
    /// Delivers `n` over its device's live channel, here or on another instance. A channel whose pair is not bound yet
    /// (provisional) takes it only when `toProvisional`. Returns the local message id, or nil when there is no channel
    /// for it (or its pending limit is reached): the caller takes its cloud route then.
    func deliver(_ n: HANotification, platform: HAPlatform, toProvisional: Bool) async -> String?

    /// Home Assistant had `n` accepted: with `.proof` its push token and webhook id are a pair now; with `.none` an
    /// identical bound pair is only kept fresh (see `PushChannelBindingRegistry`).
    func observe(_ n: HANotification, evidence: PushChannelPairEvidence) async

    /// Sends `event` to the device with `pushToken` (registered with `webhookID`) over its live channel, when that
    /// channel confirms, and waits up to `timeout` for the app's confirm. The event gets a fresh `hass_confirm_id`.
    /// True when the device confirmed in time; false when it has no such channel, did not confirm, or the write failed.
    func deliverConfirmed(_ event: [String: JSONValue], pushToken: String, webhookID: String?, timeout: Duration) async -> Bool
}
