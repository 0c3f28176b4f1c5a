import Foundation
import Logging
import PushRelayCore
import PushRelayStore

/// Which push token may open a push channel for which webhook id.
///
/// The rule follows Home Assistant: a push token belongs to the webhook id that Home Assistant's accepted
/// notifications (answered 201) carry it with, and each webhook id to one push token. When Home Assistant's posts
/// show a token refresh (same webhook id, new token) or a re-registration (same token, new webhook id), the new pair
/// replaces the old one and the channels of the old pair are closed.
///
/// Before Home Assistant has sent anything for a device, a push token may subscribe only when neither it nor the
/// webhook id is bound to anything (a *provisional* channel), and a provisional channel never replaces a channel of
/// another push token. Home Assistant's first notification then fixes the pair and closes any channel that does not
/// match it. So whoever arrives first, a stranger who knows only a webhook id cannot keep a device off its channel.
final class PushChannelBindingRegistry: Sendable {
    /// What a push token may do with a webhook id.
    enum Verdict: Sendable, Equatable {
        /// Home Assistant has sent this pair.
        case bound
        /// Neither the token nor the webhook id is bound yet.
        case provisional
        /// The token or the webhook id belongs to another pair.
        case refused
    }

    /// Pairs known to be stored, push token → webhook id: the notification path checks here without a query.
    private let confirmed = Locked<[String: String]>([:])
    /// Past this many cached pairs the cache starts over (each pair is then read or written once more).
    private let cacheLimit: Int
    let store: any PushChannelStorage
    let clock: any TimePort
    let logger: Logger

    init(store: any PushChannelStorage, clock: any TimePort, logger: Logger, cacheLimit: Int = 200_000) {
        self.store = store
        self.clock = clock
        self.logger = logger
        self.cacheLimit = cacheLimit
    }

    /// Home Assistant had a notification for `binding` accepted. Returns nil when the pair was bound already, else
    /// the pairs it replaced (possibly none: a first notification), whose channels the caller closes.
    func observe(_ binding: PushChannelBinding) async -> [PushChannelBinding]? {
        if confirmed.withLock({ $0[binding.pushToken] == binding.webhookID }) { return nil }
        let limit = cacheLimit
        do {
            let replaced = try await store.bind(binding, now: clock.now()) { [self] replaced in
                // Inside the write, so that the cache changes in the order the writes commit.
                self.confirmed.withLock { c in
                    if c.count >= limit { c.removeAll(keepingCapacity: true) }
                    for old in replaced where c[old.pushToken] == old.webhookID { c[old.pushToken] = nil }
                    c[binding.pushToken] = binding.webhookID
                }
            }
            if !replaced.isEmpty {
                logger.info(
                    "Home Assistant moved a channel binding",
                    metadata: [
                        "binding": .string(binding.description), "replaced": .string(replaced.map(\.description).joined(separator: ", ")),
                    ]
                )
            }
            return replaced
        } catch {
            confirmed.withLock { c in if c[binding.pushToken] == binding.webhookID { c[binding.pushToken] = nil } }
            logger.error("could not store a channel binding", metadata: ["binding": .string(binding.description), "error": .string("\(error)")])
            return nil
        }
    }

    /// What `pushToken` may do with `webhookID`. Storage errors refuse.
    func verdict(pushToken: String, webhookID: String) async -> Verdict {
        if confirmed.withLock({ $0[pushToken] == webhookID }) { return .bound }
        do {
            if let own = try await store.binding(pushToken: pushToken) {
                return own.webhookID == webhookID ? .bound : .refused
            }
            return try await store.binding(webhookID: webhookID) == nil ? .provisional : .refused
        } catch {
            logger.error("could not read channel bindings; refusing the subscription", metadata: ["error": .string("\(error)")])
            return .refused
        }
    }
}
