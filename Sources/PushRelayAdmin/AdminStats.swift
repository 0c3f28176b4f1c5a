import Foundation
import PushRelayCore
import PushRelayStore

/// The figures of `GET /admin/v1/stats`, gathered from the storage protocols, and their JSON.
package struct AdminStats: Sendable {
    /// One UTC day of counted Home Assistant notifications, from the quota ledger (`daily_usage`).
    package struct Day: Sendable, Equatable {
        package var day: String
        /// Deliveries that succeeded (or hold a slot while in flight).
        package var accepted: Int
        /// Requests refused because the token's quota was spent.
        package var rejectedByQuota: Int
        /// Deliveries that failed.
        package var failed: Int
        /// Tokens with a row that day.
        package var tokens: Int
    }

    /// One UTC hour of today's counted notifications, from the delivery log.
    package struct Hour: Sendable, Equatable {
        package var hour: Int
        package var accepted: Int
        package var failed: Int
    }

    package struct ProviderOutcome: Sendable, Equatable {
        package var provider: String
        package var outcome: String
        package var count: Int
    }

    package var today: UTCDay
    package var days: [Day]
    package var hours: [Hour]
    /// Today's delivery-log rows by provider and outcome, every kind included.
    package var deliveries: [ProviderOutcome]
    /// Today's delivery-log rows by kind (`notification`, `rate_limit_notice`, `webpush_relay`, `call_invite`).
    package var kinds: [String: Int]
    /// Whether `hours`, `deliveries` and `kinds` cover all of today (`DeliverySummary.complete`).
    package var deliveryLogComplete: Bool
    package var channels: (connections: Int, subscriptions: Int, unconfirmed: Int)?
    package var matrixQueued: Int?
    var matrixDue: Int?

    /// Sums a day's usage rows: accepted = successful, failed = errors, rejected = attempts − successful − errors.
    package static func day(_ day: UTCDay, rows: [UsageRow]) -> Day {
        var d = Day(day: day.description, accepted: 0, rejectedByQuota: 0, failed: 0, tokens: rows.count)
        for r in rows {
            d.accepted += r.successful
            d.failed += r.errors
            d.rejectedByQuota += max(0, r.attempts - r.successful - r.errors)
        }
        return d
    }

    /// Today's 24 hours (counted notifications only) and the per-provider / per-kind totals (every row).
    package static func deliveries(_ summary: DeliverySummary) -> (hours: [Hour], byProvider: [ProviderOutcome], kinds: [String: Int]) {
        var hours = (0..<24).map { Hour(hour: $0, accepted: 0, failed: 0) }
        var byProvider: [String: [String: Int]] = [:]
        var kinds: [String: Int] = [:]
        for (bucket, n) in summary.counts {
            byProvider[bucket.provider, default: [:]][bucket.outcome.rawValue, default: 0] += n
            kinds[bucket.kind.rawValue, default: 0] += n
            guard bucket.counted, bucket.kind == .notification, (0..<24).contains(bucket.hour) else { continue }
            if bucket.outcome == .delivered { hours[bucket.hour].accepted += n } else { hours[bucket.hour].failed += n }
        }
        let list = byProvider.flatMap { provider, outcomes in
            outcomes.map { ProviderOutcome(provider: provider, outcome: $0.key, count: $0.value) }
        }.sorted { ($0.provider, $0.outcome) < ($1.provider, $1.outcome) }
        return (hours, list, kinds)
    }

    package var json: JSONValue {
        let totals = days.last
        var o: [String: JSONValue] = [
            "today": .string(today.description),
            "days": .array(
                days.map {
                    [
                        "day": .string($0.day), "accepted": .int(Int64($0.accepted)), "rejectedByQuota": .int(Int64($0.rejectedByQuota)),
                        "failed": .int(Int64($0.failed)), "tokens": .int(Int64($0.tokens)),
                    ]
                }
            ),
            "hours": .array(
                hours.map { ["hour": .int(Int64($0.hour)), "accepted": .int(Int64($0.accepted)), "failed": .int(Int64($0.failed))] }
            ),
            "todayTotals": [
                "accepted": .int(Int64(totals?.accepted ?? 0)), "rejectedByQuota": .int(Int64(totals?.rejectedByQuota ?? 0)),
                "failed": .int(Int64(totals?.failed ?? 0)), "tokens": .int(Int64(totals?.tokens ?? 0)),
            ],
            "deliveries": .array(
                deliveries.map { ["provider": .string($0.provider), "outcome": .string($0.outcome), "count": .int(Int64($0.count))] }
            ),
            "kinds": .object(kinds.mapValues { .int(Int64($0)) }),
            "deliveryLogComplete": .bool(deliveryLogComplete),
        ]
        if let channels {
            o["channels"] = [
                "connections": .int(Int64(channels.connections)), "subscriptions": .int(Int64(channels.subscriptions)),
                "unconfirmed": .int(Int64(channels.unconfirmed)),
            ]
        } else {
            o["channels"] = .null
        }
        o["matrixQueue"] = matrixQueued.map { ["queued": .int(Int64($0)), "due": .int(Int64(matrixDue ?? 0))] } ?? .null
        return .object(o)
    }
}
