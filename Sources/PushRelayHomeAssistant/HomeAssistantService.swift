import PushRelayCore
import PushRelayPushChannel

/// Home Assistant's notifications: over the device's live push channel when it has one (no quota used), else by
/// the app's cloud route. Returns domain outcomes; `HomeAssistantAnswer` renders them for HTTP.
package final class HomeAssistantService: Sendable {
    package let pushChannel: any PushChannelPort
    package let cloud: HomeAssistantCloudSender

    package init(pushChannel: any PushChannelPort, cloud: HomeAssistantCloudSender) {
        self.pushChannel = pushChannel
        self.cloud = cloud
    }

    /// Handles one notification. `trusted`: it came through a closed route (`HomeAssistantAccess`), so its caller is
    /// Home Assistant.
    ///
    /// Which notifications bind their push token to their webhook id for the push channel
    /// (`PushChannelBindingRegistry`): a trusted one that was accepted, and one a cloud provider took on the token's
    /// quota (`PushChannelPairEvidence`). Any other accepted one only keeps an identical bound pair fresh. So a channel
    /// whose pair is not bound yet (provisional) gets an open route's notification only when the app has no cloud
    /// route (a local-only app): for other apps the notification goes by the cloud, where the provider checks the
    /// token, and then binds the pair.
    package func send(_ n: HANotification, platform: HAPlatform, trusted: Bool = false) async -> HomeAssistantOutcome {
        let toProvisional = trusted || !cloud.hasCloudRoute(appID: n.registrationInfo.appID)
        let outcome: HomeAssistantOutcome
        var evidence = PushChannelPairEvidence.none
        if let id = await pushChannel.deliver(n, platform: platform, toProvisional: toProvisional) {
            outcome = await cloud.accepted(n, messageID: "local:\(id)")
        } else {
            (outcome, evidence) = await cloud.sendWithEvidence(n, platform: platform)
        }
        guard outcome.isAccepted else { return outcome }
        await pushChannel.observe(n, evidence: trusted ? .proof : evidence)
        return outcome
    }

    /// Read-only quota for `checkRateLimits`; nil when the quota database cannot be read.
    package func rateLimits(pushToken: String) async -> RateLimits? {
        await cloud.rateLimits(pushToken: pushToken, appID: nil)
    }
}
