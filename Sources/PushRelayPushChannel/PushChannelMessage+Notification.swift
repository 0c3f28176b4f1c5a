import Foundation
import PushRelayCore
import PushRelayStore

extension PushChannelMessage {
    /// A channel message for Home Assistant's notification `n`, kept until `channel.offline_ttl` from `now`.
    package init(
        id: String = RandomID.hex128(),
        _ n: HANotification,
        platform: HAPlatform,
        state: State,
        fallback: Bool,
        now: Date,
        settings: PushChannelSettings
    ) {
        self.init(
            id: id,
            webhookID: n.registrationInfo.webhookID ?? "",
            pushToken: n.pushToken,
            platform: platform,
            notification: n.requestBody,
            state: state,
            fallback: fallback,
            createdAt: now,
            expiresAt: now.addingTimeInterval(Double(settings.offlineTTLms) / 1000)
        )
    }
}
