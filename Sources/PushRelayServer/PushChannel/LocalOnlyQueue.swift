import Logging
import PushRelayCore
import PushRelayStore

/// Where a local-only app's notification waits for its device's channel (`apps: … provider: local`): stored as a
/// queued channel message, replayed when the device subscribes, dropped after `channel.offline_ttl`.
struct LocalOnlyQueue: Sendable {
    let store: any PushChannelStorage
    let settings: PushChannelSettings
    let clock: any WallClock

    /// Stores `n` for its device; returns the message id.
    func queue(_ n: HANotification, platform: HAPlatform) async throws -> String {
        let message = PushChannelMessage(n, platform: platform, state: .queued, fallback: false, now: clock.now(), settings: settings)
        try await store.save(message)
        return message.id
    }
}
