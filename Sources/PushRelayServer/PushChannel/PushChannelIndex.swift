import PushRelayCore
import PushRelayStore

/// The live channels of this instance: which subscription serves which webhook id and which push token.
///
/// A webhook id has at most one channel, and so has a push token: a new subscription replaces the old one. What
/// happens to the replaced channel's messages is `PushChannelHub`'s business; this type only keeps the index.
final class PushChannelIndex: Sendable {
    private struct State {
        var byWebhook: [String: PushChannelSubscription] = [:]
        var byToken: [String: PushChannelSubscription] = [:]

        mutating func remove(_ sub: PushChannelSubscription) {
            if byWebhook[sub.webhookID] === sub { byWebhook[sub.webhookID] = nil }
            if let t = sub.pushToken, byToken[t] === sub { byToken[t] = nil }
        }
    }

    enum SubscribeError: Error {
        case tooManyChannels
        /// A provisional subscription met a channel of another credential, or its pair was bound meanwhile.
        case notBound
    }

    private let state = Locked(State())
    /// `channel.max_channels`: a subscription that would open one more is refused.
    let maxChannels: Int

    init(maxChannels: Int) {
        self.maxChannels = maxChannels
    }

    var count: Int { state.withLock { $0.byWebhook.count } }

    /// The channel a Home Assistant notification goes to: its webhook id's, else its push token's.
    func subscription(for n: HANotification) -> PushChannelSubscription? {
        state.withLock { s in
            if let w = n.registrationInfo.webhookID, let sub = s.byWebhook[w], sub.accepts(n) { return sub }
            if let sub = s.byToken[n.pushToken], sub.accepts(n) { return sub }
            return nil
        }
    }

    /// The live channel of a device registered for calls: by its push token, else by its webhook id.
    func subscription(pushToken: String, webhookID: String?) -> PushChannelSubscription? {
        state.withLock { s in
            if let sub = s.byToken[pushToken] { return sub }
            if let webhookID, let sub = s.byWebhook[webhookID], sub.pushToken == nil || sub.pushToken == pushToken { return sub }
            return nil
        }
    }

    /// Whether a channel for `webhookID` is live here.
    func holds(webhookID: String) -> Bool {
        state.withLock { $0.byWebhook[webhookID] != nil }
    }

    /// Registers `sub` and returns the channel it replaced (same webhook id, else same push token), now removed.
    ///
    /// A `provisional` subscription (a pair Home Assistant has not sent yet) never replaces a channel of another
    /// credential.
    func register(_ sub: PushChannelSubscription, provisional: Bool) throws(SubscribeError) -> PushChannelSubscription? {
        try state.withLock { s throws(SubscribeError) -> PushChannelSubscription? in
            let old = s.byWebhook[sub.webhookID] ?? sub.pushToken.flatMap { s.byToken[$0] }
            if provisional, let old, old.pushToken == nil || old.pushToken != sub.pushToken { throw .notBound }
            if old == nil && s.byWebhook.count >= maxChannels { throw .tooManyChannels }
            if let old { s.remove(old) }
            s.byWebhook[sub.webhookID] = sub
            if let t = sub.pushToken { s.byToken[t] = sub }
            return old
        }
    }

    /// Removes `sub` if it is still registered.
    func remove(_ sub: PushChannelSubscription) {
        state.withLock { $0.remove(sub) }
    }

    /// Removes subscription `id` of `connection` (`unsubscribe_events`); nil when it is not a live one.
    func remove(connection: PushChannelConnection, subscriptionID id: Int64) -> PushChannelSubscription? {
        state.withLock { s in
            guard let sub = s.byWebhook.values.first(where: { $0.connection === connection && $0.id == id }) else { return nil }
            s.remove(sub)
            return sub
        }
    }

    /// Removes every channel of `connection` (it went away).
    func removeAll(of connection: PushChannelConnection) -> [PushChannelSubscription] {
        state.withLock { s in
            let subs = s.byWebhook.values.filter { $0.connection === connection }
            for sub in subs { s.remove(sub) }
            return subs
        }
    }

    /// Removes the push-token channels that contradict `binding`: the token on another webhook id, or another token
    /// on its webhook id. A push token holds at most one channel, so the two candidates are found by key.
    func removeConflicting(with binding: PushChannelBinding) -> [PushChannelSubscription] {
        state.withLock { s in
            var conflicting: [PushChannelSubscription] = []
            if let sub = s.byWebhook[binding.webhookID], let token = sub.pushToken, token != binding.pushToken { conflicting.append(sub) }
            if let sub = s.byToken[binding.pushToken], sub.webhookID != binding.webhookID { conflicting.append(sub) }
            for sub in conflicting { s.remove(sub) }
            return conflicting
        }
    }
}
