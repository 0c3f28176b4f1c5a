import Foundation
import PushRelayCore

/// A day of the delivery log counted by hour, provider, kind and outcome (the admin console's charts).
public struct DeliverySummary: Sendable, Equatable {
    public struct Bucket: Sendable, Hashable {
        /// The UTC hour of `at`, 0…23.
        public var hour: Int
        public var provider: String
        /// `delivery_log.kind` (`DeliveryKind`).
        public var kind: String
        /// Whether the delivery counted against the token's quota.
        public var counted: Bool
        /// `delivered` or the failure class.
        public var outcome: String

        public init(hour: Int, provider: String, kind: String, counted: Bool, outcome: String) {
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
        let dayString = day.description
        var reachedEarlierDay = false
        for row in rows {
            if row.day < dayString {
                reachedEarlierDay = true
                break
            }
            guard row.day == dayString else { continue }
            summary.counts[
                Bucket(hour: hour(of: row.at), provider: row.provider, kind: row.kind, counted: row.counted, outcome: row.outcome),
                default: 0
            ] += 1
        }
        summary.complete = reachedEarlierDay || rows.count < scanLimit
        return summary
    }

    /// The hour of an ISO-8601 UTC timestamp (`2026-11-21T13:05:00.000Z` → 13); 0 if it has none.
    static func hour(of iso: String) -> Int {
        let chars = Array(iso.utf8)
        guard chars.count >= 13, chars[10] == UInt8(ascii: "T") || chars[10] == UInt8(ascii: " ") else { return 0 }
        let h = Int(chars[11] &- 48) * 10 + Int(chars[12] &- 48)
        return (0..<24).contains(h) ? h : 0
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
        for row in rows where row.outcome != "delivered" && listed.count < limit {
            guard seen.insert(row.pushToken).inserted else { continue }
            if let dead = try await deadToken(row.pushToken, now: now) {
                listed.append(ListedDeadToken(pushToken: row.pushToken, dead: dead))
            }
        }
        return listed.sorted { $0.dead.markedAt > $1.dead.markedAt }
    }
}
