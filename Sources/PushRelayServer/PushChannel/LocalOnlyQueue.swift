import Logging
import PushRelayCore
import PushRelayStore

/// Where a local-only app's notification waits for its device's channel (`apps: … provider: none`): stored as a
/// queued channel message, replayed when the device subscribes, dropped after `channel.offline_ttl`.
///
/// Anyone may post for any push token, so the queue has two bounds, and a notification past either is neither stored
/// nor counted anywhere:
/// - `channel.max_queued_per_token`: the messages stored for one push token (queued or unconfirmed);
/// - `channel.max_queued_bytes`: the notification JSON stored for every device together.
///
/// The token's figure is read from the store for each notification (an index look-up). The total is read at most
/// every `totalRefresh`, and between readings this queue adds what it stores: room a device frees by taking its
/// messages shows within that time. Notifications being queued at the same moment count against both bounds, so
/// concurrent posts cannot pass them together. With several instances on one database each keeps its own reading
/// of the total, so the total may be passed by what the others queued since their last reading.
final class LocalOnlyQueue: Sendable {
    /// What became of a notification.
    enum Result: Sendable, Equatable {
        case queued(id: String)
        /// The token has `waiting` messages stored, `channel.max_queued_per_token` or more: not stored.
        case deviceFull(waiting: Int)
        /// The stored messages of all devices would pass `channel.max_queued_bytes`: not stored.
        case full
    }

    /// What `Retry-After` says when the total is reached: the queue empties only as devices connect or messages
    /// expire, so a retry within seconds would be refused again.
    static let retryAfterSeconds = 60
    /// How old a reading of the total may be before it is read again.
    static let totalRefresh = Duration.seconds(5)
    /// How old a reading may be when it would refuse a notification; a refusal rests on a reading at least this fresh.
    static let refusalRefresh = Duration.seconds(1)

    private struct Ledger {
        /// Notifications being queued right now, per token, and their bytes.
        var inFlight: [String: Int] = [:]
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

    let store: any PushChannelStorage
    let settings: PushChannelSettings
    let clock: any TimePort
    let logger: Logger
    private let ledger = Locked(Ledger())

    init(store: any PushChannelStorage, settings: PushChannelSettings, clock: any TimePort, logger: Logger = Logger(label: "pushrelay")) {
        self.store = store
        self.settings = settings
        self.clock = clock
        self.logger = logger
    }

    /// Stores `n` for its device, unless a bound refuses it. Throws when the store cannot be read or written.
    func queue(_ n: HANotification, platform: HAPlatform) async throws -> Result {
        let message = PushChannelMessage(n, platform: platform, state: .queued, fallback: false, now: clock.now(), settings: settings)
        let size = message.notification.jsonString().utf8.count
        let token = message.pushToken
        // Taken before the store is read: another notification's save that completes meanwhile is then counted twice at
        // worst, never missed.
        let others = ledger.withLock { l in
            defer {
                l.inFlight[token, default: 0] += 1
                l.inFlightBytes += size
            }
            return (forToken: l.inFlight[token, default: 0], bytes: l.inFlightBytes)
        }
        defer {
            ledger.withLock { l in
                l.inFlight[token, default: 1] -= 1
                if l.inFlight[token] == 0 { l.inFlight[token] = nil }
                l.inFlightBytes -= size
            }
        }
        let waiting = try await store.storedCount(pushToken: token) + others.forToken
        if waiting >= settings.maxQueuedPerToken {
            logger.debug("local-only queue of a device is full", metadata: ["token": .string(TokenDisplay.short(token)), "waiting": "\(waiting)"])
            return .deviceFull(waiting: waiting)
        }
        let limit = settings.maxQueuedBytes - others.bytes - size
        if try await totalBytes(readingAfter: Self.totalRefresh) > limit, try await totalBytes(readingAfter: Self.refusalRefresh) > limit {
            let warn = ledger.withLock { l in
                defer { l.warnedFull = true }
                return !l.warnedFull
            }
            if warn {
                logger.warning(
                    "local-only notifications are refused: the stored channel messages reach channel.max_queued_bytes",
                    metadata: ["limit": "\(settings.maxQueuedBytes)"]
                )
            }
            return .full
        }
        try await store.save(message)
        ledger.withLock { l in
            l.total += size
            if l.reading { l.addedWhileReading += size }
            l.warnedFull = false
        }
        return .queued(id: message.id)
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
