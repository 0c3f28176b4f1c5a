import PushRelayCore

/// Home Assistant's notifications: over the device's live websocket channel when it has one (no quota used), else by
/// the app's cloud route. Returns domain outcomes; `HomeAssistantAnswer` renders them for HTTP.
final class HomeAssistantService: Sendable {
    let localPush: LocalPushHub?
    let cloud: HomeAssistantCloudRoute

    init(localPush: LocalPushHub?, cloud: HomeAssistantCloudRoute) {
        self.localPush = localPush
        self.cloud = cloud
    }

    /// Handles one notification. An accepted one also binds its push token to its webhook id for the websocket
    /// channel (`LocalPushBindingRegistry`): only Home Assistant's accepted posts move a binding.
    func send(_ n: HANotification, platform: HAPlatform) async -> HomeAssistantOutcome {
        let outcome: HomeAssistantOutcome
        if let localPush, let id = await localPush.deliver(n, platform: platform) {
            outcome = await cloud.accepted(n, messageID: "local:\(id)")
        } else if let localPush, let id = await localPush.deliverRemotely(n, platform: platform) {
            outcome = await cloud.accepted(n, messageID: "local:\(id)")
        } else {
            outcome = await cloud.send(n, platform: platform, localPush: localPush)
        }
        if outcome.isAccepted { await localPush?.observe(n) }
        return outcome
    }

    /// The outcome of `n` when it is known without waiting for storage or a provider, else nil (then `send` decides,
    /// as it would have anyway): its device has no websocket channel that might take it and its app's provider is at
    /// its in-flight bound, so `send` would refuse it too. A caller on an event loop answers such a request there,
    /// without starting a task: past capacity most requests are refused, and a refusal must cost next to nothing.
    func outcomeWithoutWaiting(_ n: HANotification) -> HomeAssistantOutcome? {
        if let localPush, localPush.mightDeliver(n) { return nil }
        return cloud.refusalAtBound(n)
    }

    /// Read-only quota for `checkRateLimits`; nil when the quota database cannot be read.
    func rateLimits(pushToken: String) async -> RateLimits? {
        await cloud.rateLimits(pushToken: pushToken, appID: nil)
    }
}
