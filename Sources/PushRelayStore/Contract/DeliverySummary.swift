import Foundation
import PushRelayCore

/// A day of the delivery log counted by hour, provider, kind and outcome (the admin console's charts).
public struct DeliverySummary: Sendable, Equatable {
    public struct Bucket: Sendable, Hashable {
        /// The UTC hour of `at`, 0…23.
        public var hour: Int
        public var provider: String
        public var kind: DeliveryKind
        /// Whether the delivery counted against the token's quota.
        public var counted: Bool
        /// `delivered` or the failure class.
        public var outcome: DeliveryOutcomeClass

        public init(hour: Int, provider: String, kind: DeliveryKind, counted: Bool, outcome: DeliveryOutcomeClass) {
            self.hour = hour
            self.provider = provider
            self.kind = kind
            self.counted = counted
            self.outcome = outcome
        }
    }

    public var day: UTCDay
    public var counts: [Bucket: Int]
    /// False when the engine read only part of the day (a scan bounded by `scanLimit` that did not reach its start).
    public var complete: Bool

    public init(day: UTCDay, counts: [Bucket: Int] = [:], complete: Bool = true) {
        self.day = day
        self.counts = counts
        self.complete = complete
    }

    /// Counts `rows`, newest first as `recentDeliveries` returns them, keeping those of `day`.
    public static func counting(_ rows: [LoggedDelivery], day: UTCDay, scanLimit: Int) -> DeliverySummary {
        var summary = DeliverySummary(day: day)
        var reachedEarlierDay = false
        for row in rows {
            if row.day < day {
                reachedEarlierDay = true
                break
            }
            guard row.day == day else { continue }
            summary.counts[
                Bucket(hour: hour(of: row.at), provider: row.provider, kind: row.kind, counted: row.counted, outcome: row.outcome),
                default: 0
            ] += 1
        }
        summary.complete = reachedEarlierDay || rows.count < scanLimit
        return summary
    }

    /// The UTC hour of `date`, 0…23.
    static func hour(of date: Date) -> Int {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        return ((seconds % 86_400 + 86_400) % 86_400) / 3_600
    }
}

/// A dead token as the admin API lists it.
public struct ListedDeadToken: Sendable, Equatable {
    public var pushToken: String
    public var dead: DeadToken

    public init(pushToken: String, dead: DeadToken) {
        self.pushToken = pushToken
        self.dead = dead
    }
}

extension DeliveryLog {
    /// Works for any engine through `recentDeliveries`: reads at most `scanLimit` rows, newest first.
    public func deliverySummary(day: UTCDay, scanLimit: Int) async throws -> DeliverySummary {
        let rows = try await recentDeliveries(pushToken: nil, limit: scanLimit)
        return DeliverySummary.counting(rows, day: day, scanLimit: scanLimit)
    }

    /// Works for any engine through `recentDeliveries` and `deadToken`: the distinct tokens of the most recent failed
    /// delivery-log rows (a scan of at most 10,000 rows) that are still remembered as dead at `now`.
    public func deadTokens(now: Date, limit: Int) async throws -> [ListedDeadToken] {
        let rows = try await recentDeliveries(pushToken: nil, limit: 10_000)
        var seen = Set<String>()
        var listed: [ListedDeadToken] = []
        for row in rows where row.outcome != .delivered && listed.count < limit {
            guard seen.insert(row.pushToken).inserted else { continue }
            if let dead = try await deadToken(row.pushToken, now: now) {
                listed.append(ListedDeadToken(pushToken: row.pushToken, dead: dead))
            }
        }
        return listed.sorted { $0.dead.markedAt > $1.dead.markedAt }
    }
}
