import PushRelayCore

/// Home Assistant's notifications: over the device's live push channel when it has one (no quota used), else by
/// the app's cloud route. Returns domain outcomes; `HomeAssistantAnswer` renders them for HTTP.
final class HomeAssistantService: Sendable {
    let pushChannel: any PushChannelPort
    let cloud: HomeAssistantCloudSender

    init(pushChannel: any PushChannelPort, cloud: HomeAssistantCloudSender) {
        self.pushChannel = pushChannel
        self.cloud = cloud
    }

    /// Handles one notification. An accepted one also binds its push token to its webhook id for the websocket
    /// channel (`PushChannelBindingRegistry`): only Home Assistant's accepted posts move a binding.
    func send(_ n: HANotification, platform: HAPlatform) async -> HomeAssistantOutcome {
        let outcome: HomeAssistantOutcome
        if let id = await pushChannel.deliver(n, platform: platform) {
            outcome = await cloud.accepted(n, messageID: "local:\(id)")
        } else {
            outcome = await cloud.send(n, platform: platform)
        }
        if outcome.isAccepted { await pushChannel.observe(n) }
        return outcome
    }

    /// Read-only quota for `checkRateLimits`; nil when the quota database cannot be read.
    func rateLimits(pushToken: String) async -> RateLimits? {
        await cloud.rateLimits(pushToken: pushToken, appID: nil)
    }
}
