import Foundation
import Logging
import PushRelayCore
import PushRelayStore

/// Which push token may open a push channel for which webhook id.
///
/// The rule follows Home Assistant: a push token belongs to the webhook id that Home Assistant's notifications carry
/// it with, and each webhook id to one push token. Only a notification that proves something binds a pair
/// (`PushChannelPairEvidence.proof`: a provider took a counted notification for the token, or the notification came
/// through a closed route); others only keep an identical stored pair fresh (`refresh`). When such notifications show
/// a token refresh (same webhook id, new token) or a re-registration (same token, new webhook id), the new pair
/// replaces the old one and the channels of the old pair are closed.
///
/// Before a pair is bound, a push token may subscribe only when neither it nor the webhook id is bound to anything (a
/// *provisional* channel), and a provisional channel never replaces a channel of another push token. The first
/// notification that binds the pair then closes any channel that does not match it. So whoever arrives first, a
/// stranger who knows only a webhook id cannot keep a device off its channel, and a pair a stranger made up stays
/// provisional however often it is posted.
///
/// Each stored pair records when Home Assistant last sent it (written at most once a UTC day per pair while it stays
/// cached): the prune deletes the pairs not sent for `quota.retention_days`.
package final class PushChannelBindingRegistry: Sendable {
    /// What a push token may do with a webhook id.
    package enum Verdict: Sendable, Equatable {
        /// The pair is bound.
        case bound
        /// Neither the token nor the webhook id is bound yet.
        case provisional
        /// The token or the webhook id belongs to another pair.
        case refused
    }

    private struct Cached {
        var webhookID: String
        /// The UTC day the pair was last written (bound or refreshed).
        var writtenOn: UTCDay
    }

    private struct Cache {
        var pairs: [String: Cached] = [:]
        var bytes = 0
        /// Counts the binding writes seen (`bind`'s `whileWriting`): a refresh caches its pair only when none came
        /// between its look-up and its write.
        var binds: UInt64 = 0

        /// What one entry is taken to cost: its two strings and the dictionary's own share.
        static func cost(_ token: String, _ webhookID: String) -> Int { token.utf8.count + webhookID.utf8.count + 96 }

        mutating func set(_ token: String, _ cached: Cached?, limit: Int) {
            if let old = pairs[token] { bytes -= Self.cost(token, old.webhookID) }
            pairs[token] = cached
            guard let cached else { return }
            let cost = Self.cost(token, cached.webhookID)
            if bytes + cost > limit {
                pairs.removeAll(keepingCapacity: false)
                pairs[token] = cached
                bytes = 0
            }
            bytes += cost
        }
    }

    /// Pairs known to be stored, push token → webhook id: the notification path checks here without a query.
    private let confirmed = Locked(Cache())
    /// Past this many bytes of cached pairs (`Cache.cost`) the cache starts over (each pair is then read or written
    /// once more).
    private let cacheBytes: Int
    package let store: any PushChannelStorage
    package let clock: any TimePort
    package let logger: Logger

    package init(store: any PushChannelStorage, clock: any TimePort, logger: Logger, cacheBytes: Int = 32 * 1024 * 1024) {
        self.store = store
        self.clock = clock
        self.logger = logger
        self.cacheBytes = cacheBytes
    }

    /// The bytes the cache holds now, as `Cache.cost` counts them.
    var cachedBytes: Int { confirmed.withLock { $0.bytes } }

    /// Whether `binding` is cached as bound, and was written today.
    private func isFresh(_ binding: PushChannelBinding, today: UTCDay) -> Bool {
        confirmed.withLock { c in
            guard let cached = c.pairs[binding.pushToken] else { return false }
            return cached.webhookID == binding.webhookID && cached.writtenOn == today
        }
    }

    /// A notification that proves the pair (`PushChannelPairEvidence.proof`) was accepted for `binding`. Returns nil
    /// when the pair was bound already (or cannot be stored: past `FieldLimits`, a storage fault), else the pairs it
    /// replaced (possibly none: a first notification), whose channels the caller closes.
    package func observe(_ binding: PushChannelBinding) async -> [PushChannelBinding]? {
        let now = clock.now()
        let today = UTCDay(now)
        if isFresh(binding, today: today) { return nil }
        guard binding.isWithinLimits else { return nil }
        let limit = cacheBytes
        do {
            let replaced = try await store.bind(binding, now: now) { [self] replaced in
                // Inside the write, so that the cache changes in the order the writes commit.
                self.confirmed.withLock { c in
                    c.binds &+= 1
                    for old in replaced where c.pairs[old.pushToken]?.webhookID == old.webhookID { c.set(old.pushToken, nil, limit: limit) }
                    c.set(binding.pushToken, Cached(webhookID: binding.webhookID, writtenOn: today), limit: limit)
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
            confirmed.withLock { c in if c.pairs[binding.pushToken]?.webhookID == binding.webhookID { c.set(binding.pushToken, nil, limit: limit) } }
            logger.error("could not store a channel binding", metadata: ["binding": .string(binding.description), "error": .string("\(error)")])
            return nil
        }
    }

    /// A notification that proves nothing about its pair was accepted for `binding`: when exactly that pair is bound,
    /// records that Home Assistant sent it (at most once a UTC day while cached); it never binds, replaces or moves a
    /// pair. A pair the cache does not hold is looked up first, so that posts of pairs nobody bound write nothing.
    package func refresh(_ binding: PushChannelBinding) async {
        let now = clock.now()
        let today = UTCDay(now)
        guard binding.isWithinLimits, !isFresh(binding, today: today) else { return }
        let (cached, binds) = confirmed.withLock { ($0.pairs[binding.pushToken]?.webhookID == binding.webhookID, $0.binds) }
        let limit = cacheBytes
        do {
            if !cached, try await store.binding(pushToken: binding.pushToken) != binding { return }
            if try await store.refresh(binding, now: now) {
                confirmed.withLock { c in
                    // A bind since the look-up may have replaced the pair: then the cache follows the bind alone.
                    guard c.binds == binds else { return }
                    c.set(binding.pushToken, Cached(webhookID: binding.webhookID, writtenOn: today), limit: limit)
                }
            }
        } catch {
            logger.error("could not refresh a channel binding", metadata: ["binding": .string(binding.description), "error": .string("\(error)")])
        }
    }

    /// What `pushToken` may do with `webhookID`. Storage errors refuse.
    package func verdict(pushToken: String, webhookID: String) async -> Verdict {
        if confirmed.withLock({ $0.pairs[pushToken]?.webhookID == webhookID }) { return .bound }
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
