import Logging
import PushRelayCore
import PushRelayStore

/// Where notifications wait for their device's channel: a local-only app's (`apps: … provider: none`), queued, and
/// those sent to a channel that asked for `fallback: false`, which stay stored for the device until it confirms them.
/// Stored as channel messages, replayed when the device subscribes, dropped after `channel.offline_ttl`.
///
/// Anyone may post for any push token, so every message stored for a device here goes under two bounds, and a
/// notification past either is neither stored nor counted anywhere:
/// - `channel.max_queued_per_token`: the messages stored for one push token (queued or unconfirmed);
/// - `channel.max_queued_bytes`: the notification JSON stored for every device together.
///
/// The token's figure is read from the store for each notification (an index look-up), and while one notification
/// for a token is checked and stored, the next one for that token waits its turn: of concurrent notifications for one
/// token, exactly as many as the bound leaves room for are stored. The total is read at most every `totalRefresh`, and
/// between readings this queue adds what it stores: room a device frees by taking its messages shows within that
/// time. Notifications being stored at the same moment count against the total, so concurrent posts cannot pass it
/// together. With several instances on one database each keeps its own turns and its own reading of the total, so
/// notifications stored by the others at the same moment may pass the per-token bound by as many, and the total by
/// what the others stored since the last reading.
package final class LocalOnlyQueue: Sendable {
    /// What became of a notification.
    package enum Result: Sendable, Equatable {
        case queued(id: String)
        /// The token has `waiting` messages stored, `channel.max_queued_per_token` or more: not stored.
        case deviceFull(waiting: Int)
        /// The stored messages of all devices would pass `channel.max_queued_bytes`: not stored.
        case full
    }

    /// What `Retry-After` says when the total is reached: the queue empties only as devices connect or messages
    /// expire, so a retry within seconds would be refused again.
    package static let retryAfterSeconds = 60
    /// How old a reading of the total may be before it is read again.
    static let totalRefresh = Duration.seconds(5)
    /// How old a reading may be when it would refuse a notification; a refusal rests on a reading at least this fresh.
    static let refusalRefresh = Duration.seconds(1)

    private struct Ledger {
        /// The bytes of the notifications being stored right now.
        var inFlightBytes = 0
        /// The last reading of the stored bytes, plus what this queue stored since.
        var total = 0
        var readAt: ContinuousClock.Instant?
        var reading = false
        /// What this queue stored while a reading was under way (the reading may have missed it).
        var addedWhileReading = 0
        /// A refusal for the total was logged since the last notification queued.
        var warnedFull = false
    }

    package let store: any PushChannelStorage
    package let settings: PushChannelSettings
    package let clock: any TimePort
    package let logger: Logger
    private let ledger = Locked(Ledger())
    /// Per push token with a notification being checked and stored, the notifications waiting for their turn, first
    /// come first served. A token is absent when none is.
    private let turns = Locked([String: FIFOQueue<CheckedContinuation<Void, Never>>]())

    package init(store: any PushChannelStorage, settings: PushChannelSettings, clock: any TimePort, logger: Logger = Logger(label: "pushrelay")) {
        self.store = store
        self.settings = settings
        self.clock = clock
        self.logger = logger
    }

    /// Stores a local-only app's `n`, queued for its device, unless a bound refuses it. Throws when the store cannot be
    /// read or written.
    package func queue(_ n: HANotification, platform: HAPlatform) async throws -> Result {
        let message = PushChannelMessage(n, platform: platform, state: .queued, fallback: false, now: clock.now(), settings: settings)
        return try await admit(message) { try await store.save(message) }
    }

    /// Stores `message` for its device by `save` (which returns once it is durable), unless a bound refuses it: then
    /// `save` is not called. Every message stored for a device to wait for it goes through here. Throws what the
    /// store's reads, or `save`, throw.
    package func admit(_ message: PushChannelMessage, save: () async throws -> Void) async throws -> Result {
        let size = message.notification.jsonString().utf8.count
        let token = message.pushToken
        await takeTurn(token)
        defer { passTurn(token) }
        let waiting = try await store.storedCount(pushToken: token)
        if waiting >= settings.maxQueuedPerToken {
            logger.debug(
                "the stored messages of a device reach its bound",
                metadata: ["token": .string(TokenDisplay.short(token)), "waiting": "\(waiting)"]
            )
            return .deviceFull(waiting: waiting)
        }
        // Taken before the total is read: another notification's save that completes meanwhile is then counted twice at
        // worst, never missed.
        let othersBytes = ledger.withLock { l in
            defer { l.inFlightBytes += size }
            return l.inFlightBytes
        }
        defer { ledger.withLock { $0.inFlightBytes -= size } }
        let limit = settings.maxQueuedBytes - othersBytes - size
        if try await totalBytes(readingAfter: Self.totalRefresh) > limit, try await totalBytes(readingAfter: Self.refusalRefresh) > limit {
            let warn = ledger.withLock { l in
                defer { l.warnedFull = true }
                return !l.warnedFull
            }
            if warn {
                logger.warning(
                    "notifications for devices' channels are refused: the stored channel messages reach channel.max_queued_bytes",
                    metadata: ["limit": "\(settings.maxQueuedBytes)"]
                )
            }
            return .full
        }
        try await save()
        ledger.withLock { l in
            l.total += size
            if l.reading { l.addedWhileReading += size }
            l.warnedFull = false
        }
        return .queued(id: message.id)
    }

    /// Waits until no other notification for `token` is being checked or stored here.
    private func takeTurn(_ token: String) async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = turns.withLock { t in
                guard t[token] != nil else {
                    t[token] = FIFOQueue()
                    return true
                }
                t[token]?.append(turn)
                return false
            }
            if now { turn.resume() }
        }
    }

    /// Hands `token`'s turn to the next notification waiting for it, if any.
    private func passTurn(_ token: String) {
        let next = turns.withLock { t in
            guard let turn = t[token]?.popFirst() else {
                t[token] = nil
                return nil as CheckedContinuation<Void, Never>?
            }
            return turn
        }
        next?.resume()
    }

    /// The stored bytes: the kept figure, or a new reading when the kept one is older than `age` (or none was taken).
    private func totalBytes(readingAfter age: Duration) async throws -> Int {
        let now = clock.instant
        let read = ledger.withLock { l in
            if let at = l.readAt, l.reading || at.duration(to: now) < age { return false }
            l.reading = true
            l.addedWhileReading = 0
            return true
        }
        guard read else { return ledger.withLock { $0.total } }
        do {
            let bytes = try await store.storedBytes()
            return ledger.withLock { l in
                l.total = bytes + l.addedWhileReading
                l.readAt = now
                l.reading = false
                return l.total
            }
        } catch {
            ledger.withLock { $0.reading = false }
            throw error
        }
    }
}
