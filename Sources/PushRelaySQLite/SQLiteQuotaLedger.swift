import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// SQLite's quota ledger: each reservation is decided (`QuotaDecision.decide`) and its decision written in one
/// group-committed transaction on the single writer connection, so concurrent requests of any number of connections
/// and processes on the file agree.
public final class SQLiteQuotaLedger: QuotaLedger {
    let database: PushRelayDatabase

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    public func reserveUnlessDead(
        pushToken: String,
        appID: String?,
        webhookID: String?,
        day: UTCDay,
        policy: QuotaPolicy,
        now: Date,
        checkDead: Bool
    ) async throws -> ReserveResult {
        let dayKey = day.description
        let stamp = ISO8601UTC.string(now)
        let cache = database.usageCache
        return try await database.batcher.write { db in
            let usage = try cache.usage(db, token: pushToken, day: dayKey)
            let maximum = policy.maximum(appID: appID, override: usage.override)
            if checkDead, let until = usage.deadUntil, until > stamp, let dead = try SQLiteRows.deadToken(db, token: pushToken, now: stamp) {
                return .dead(dead, RateLimits(counters: usage.counters, maximum: maximum, day: day))
            }
            let decision = QuotaDecision.decide(current: usage.counters, maximum: maximum, noticeSent: usage.noticeSent)
            // The cache knows whether the row exists: update it in place (one B-tree seek; an upsert seeks twice), or
            // insert the day's first. `errors` is left to `complete` (?7 is only used by the insert).
            var write = try RawStatement(
                db,
                sql: usage.exists
                    ? """
                    UPDATE daily_usage SET app_id = coalesce(?3, app_id), webhook_id = coalesce(?4, webhook_id), attempts = ?5,
                        successful = ?6, notice_sent = ?8, updated_at = ?9
                    WHERE day = ?1 AND push_token = ?2
                    """
                    : """
                    INSERT INTO daily_usage (day, push_token, app_id, webhook_id, attempts, successful, errors, notice_sent, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            write.bind(dayKey)
            write.bind(pushToken)
            write.bind(appID)
            write.bind(webhookID)
            write.bind(decision.counters.attempts)
            write.bind(decision.counters.successful)
            write.bind(decision.counters.errors)
            write.bind(decision.noticeSent)
            write.bind(stamp)
            try write.execute()
            cache.stored(
                token: pushToken,
                day: dayKey,
                counters: decision.counters,
                noticeSent: decision.noticeSent,
                appID: appID ?? usage.appID,
                webhookID: webhookID ?? usage.webhookID
            )
            return .reserved(QuotaReservation(day: day, pushToken: pushToken, maximum: maximum, decision: decision))
        }
    }

    public func complete(_ reservation: QuotaReservation?, record: DeliveryRecord, markDead: DeadMark?) async throws -> UsageCounters? {
        let failedCounted = reservation != nil && record.outcome != .delivered
        let cache = database.usageCache
        return try await database.batcher.write { db in
            try SQLiteRows.insertLog(db, record, day: reservation?.day ?? UTCDay(record.at))
            if let m = markDead {
                try SQLiteRows.insertDead(db, cache, token: record.pushToken, mark: m, now: record.at)
            }
            guard let reservation else { return nil }
            guard failedCounted else { return reservation.decision.counters }
            // The slot moves from successful to errors with a relative update.
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        UPDATE daily_usage SET successful = max(successful - 1, 0), errors = errors + 1, updated_at = ?
                        WHERE day = ? AND push_token = ?
                        RETURNING attempts, successful, errors, notice_sent, app_id, webhook_id
                        """
                ),
                arguments: [ISO8601UTC.string(record.at), reservation.day.description, reservation.pushToken]
            )
            guard let row else { return nil }
            let counters = UsageCounters(attempts: row[0], successful: row[1], errors: row[2])
            cache.stored(
                token: reservation.pushToken,
                day: reservation.day.description,
                counters: counters,
                noticeSent: (row[3] as Int) != 0,
                appID: row[4],
                webhookID: row[5]
            )
            return counters
        }
    }

    public func recordDelivered(_ record: DeliveryRecord, day: UTCDay, onError: @escaping @Sendable (any Error) -> Void) {
        database.batcher.enqueue({ db in try SQLiteRows.insertLog(db, record, day: day) }, onError: onError)
    }

    /// Read by the writer in the next group commit, from its cache: a batch of reads adds no fsync, and the answer
    /// follows every write queued before it.
    public func rateLimits(pushToken: String, appID: String?, day: UTCDay, policy: QuotaPolicy) async throws -> RateLimits {
        let cache = database.usageCache
        return try await database.batcher.write { db in
            let usage = try cache.usage(db, token: pushToken, day: day.description)
            // checkRateLimits carries no app id: use the one the token last posted with, for app limits.
            let app = try appID ?? usage.appID ?? String.fetchOne(db.cachedStatement(sql: TokenDays.latest("app_id")), arguments: [pushToken])
            return RateLimits(counters: usage.counters, maximum: policy.maximum(appID: app, override: usage.override), day: day)
        }
    }
}
