import PushRelayCore

/// Where the push channel sends a message its device did not confirm in time (or could not be written to):
/// another way to the same device, which the channel knows nothing more of. Home Assistant's cloud route is the one
/// the server plugs in (`HomeAssistantCloudSender`).
package protocol PushChannelFallback: Sendable {
    /// Sends `n` the other way. Nil when it was accepted; otherwise a short summary of why not, for the log.
    func fallBack(_ n: HANotification, platform: HAPlatform) async -> String?
}
