import PushRelayCore
import PushRelayStore

/// The live channels of this instance: which subscription serves which webhook id and which push token.
///
/// A webhook id has at most one channel: a new subscription for it replaces the old one. A push token may hold
/// channels under several webhook ids (a re-registered app, or a stranger who knows the token), and a subscription
/// never closes a channel of another webhook id; notifications go only to the channel of their own pair. What
/// happens to a replaced channel's messages is `PushChannelHub`'s business; this type only keeps the index.
package final class PushChannelIndex: Sendable {
    private struct State {
        var byWebhook: [String: PushChannelSubscription] = [:]
        var byToken: [String: PushChannelSubscription] = [:]
        /// Who holds the channels in `byWebhook`, for the limits.
        var admission = PushChannelAdmission()

        mutating func remove(_ sub: PushChannelSubscription) {
            if byWebhook[sub.webhookID] === sub {
                byWebhook[sub.webhookID] = nil
                admission.removed(sub)
            }
            if let t = sub.pushToken, byToken[t] === sub { byToken[t] = nil }
        }
    }

    package enum SubscribeError: Error {
        /// `channel.max_channels` is reached, and no provisional channel may give way.
        case tooManyChannels
        /// The subscriber's address holds `channel.max_channels_per_address` channels, and none may give way.
        case tooManyChannelsFromAddress
        /// A provisional subscription, and provisional channels hold their share of `channel.max_channels`.
        case tooManyProvisionalChannels
        /// A provisional subscription met a channel of another credential, or its pair was bound meanwhile.
        case notBound
    }

    private let state = Locked(State())
    /// `channel.max_channels`, `channel.max_channels_per_address` and the provisional channels' share of the first
    /// (see `PushChannelAdmission`).
    package let limits: PushChannelAdmission.Limits

    package init(maxChannels: Int, maxChannelsPerAddress: Int = .max, maxProvisionalChannels: Int? = nil) {
        limits = .init(
            channels: maxChannels,
            perAddress: maxChannelsPerAddress,
            provisional: maxProvisionalChannels ?? PushChannelSettings.provisionalShare(of: maxChannels)
        )
    }

    package convenience init(settings: PushChannelSettings) {
        self.init(
            maxChannels: settings.maxChannels,
            maxChannelsPerAddress: settings.maxChannelsPerAddress,
            maxProvisionalChannels: settings.maxProvisionalChannels
        )
    }

    package var count: Int { state.withLock { $0.byWebhook.count } }

    /// The channel a Home Assistant notification goes to: its webhook id's, when that channel serves its pair
    /// (`PushChannelSubscription.accepts`) and, unless `provisional`, is paired. A notification without a webhook id
    /// has no channel.
    package func subscription(for n: HANotification, provisional: Bool = true) -> PushChannelSubscription? {
        state.withLock { s in
            guard let w = n.registrationInfo.webhookID, let sub = s.byWebhook[w], sub.accepts(n) else { return nil }
            guard provisional || !s.admission.isProvisional(sub) else { return nil }
            return sub
        }
    }

    /// The live channel of a device registered for calls: its webhook id's when the registration names one (and the
    /// channel serves that token), else the latest push-token channel of the token.
    package func subscription(pushToken: String, webhookID: String?) -> PushChannelSubscription? {
        state.withLock { s in
            if let webhookID {
                guard let sub = s.byWebhook[webhookID], sub.pushToken == nil || sub.pushToken == pushToken else { return nil }
                return sub
            }
            return s.byToken[pushToken]
        }
    }

    /// Whether a channel for `webhookID` is live here.
    package func holds(webhookID: String) -> Bool {
        state.withLock { $0.byWebhook[webhookID] != nil }
    }

    /// Registers `sub` and returns the channel it replaced (same webhook id), now removed.
    ///
    /// A `provisional` subscription (a pair Home Assistant has not sent yet) never replaces a channel of another
    /// credential. The limits are `PushChannelAdmission`'s: past one, a provisional subscription is refused, and a
    /// paired one takes the place of the oldest provisional channel within it. Each channel evicted so is removed and
    /// handed to `evicted` (after the lock is released), for the caller to close and settle like any ended channel.
    package func register(
        _ sub: PushChannelSubscription,
        provisional: Bool,
        evicted: (PushChannelSubscription) -> Void = { _ in }
    ) throws(SubscribeError) -> PushChannelSubscription? {
        let address = PushChannelAdmission.address(of: sub)
        let (old, evicting) = try state.withLock { s throws(SubscribeError) -> (PushChannelSubscription?, [PushChannelSubscription]) in
            let old = s.byWebhook[sub.webhookID]
            if provisional, let old, old.pushToken == nil || old.pushToken != sub.pushToken { throw .notBound }
            let plan = s.admission.plan(sub, address: address, provisional: provisional, replacing: old, channels: s.byWebhook.count, limits: limits)
            let evicting: [PushChannelSubscription]
            switch plan {
            case .success(let subs): evicting = subs
            case .failure(.channels): throw .tooManyChannels
            case .failure(.address): throw .tooManyChannelsFromAddress
            case .failure(.provisional): throw .tooManyProvisionalChannels
            }
            if let old { s.remove(old) }
            for victim in evicting { s.remove(victim) }
            s.byWebhook[sub.webhookID] = sub
            if let t = sub.pushToken { s.byToken[t] = sub }
            s.admission.added(sub, address: address, provisional: provisional)
            return (old, evicting)
        }
        for victim in evicting { evicted(victim) }
        return old
    }

    /// Home Assistant has sent `binding`: the channel of that pair, if one is live, is paired from now on.
    package func paired(with binding: PushChannelBinding) {
        state.withLock { s in
            guard let sub = s.byWebhook[binding.webhookID], sub.pushToken == binding.pushToken else { return }
            s.admission.paired(sub)
        }
    }

    /// Removes `sub` if it is still registered.
    package func remove(_ sub: PushChannelSubscription) {
        state.withLock { $0.remove(sub) }
    }

    /// Removes subscription `id` of `connection` (`unsubscribe_events`); nil when it is not a live one.
    package func remove(connection: PushChannelConnection, subscriptionID id: Int64) -> PushChannelSubscription? {
        state.withLock { s in
            guard let sub = s.byWebhook.values.first(where: { $0.connection === connection && $0.id == id }) else { return nil }
            s.remove(sub)
            return sub
        }
    }

    /// Removes every channel of `connection` (it went away).
    package func removeAll(of connection: PushChannelConnection) -> [PushChannelSubscription] {
        state.withLock { s in
            let subs = s.byWebhook.values.filter { $0.connection === connection }
            for sub in subs { s.remove(sub) }
            return subs
        }
    }

    /// Removes the push-token channel that contradicts `binding`: another token on its webhook id (Home Assistant
    /// sent the webhook id with a refreshed token). A channel of the same token under another webhook id stays: a
    /// post naming only a token proves nothing about the device, and that channel receives only its own pair anyway.
    package func removeConflicting(with binding: PushChannelBinding) -> [PushChannelSubscription] {
        state.withLock { s in
            guard let sub = s.byWebhook[binding.webhookID], let token = sub.pushToken, token != binding.pushToken else { return [] }
            s.remove(sub)
            return [sub]
        }
    }
}
