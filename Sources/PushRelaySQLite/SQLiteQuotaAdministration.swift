import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// SQLite's quota administration: per-day usage lists, a token's history, overrides, resets and pruning.
public final class SQLiteQuotaAdministration: QuotaAdministration {
    let database: PushRelayDatabase
    private var pool: DatabasePool { database.pool }

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    /// Usage for one day, busiest tokens first.
    public func list(day: UTCDay, top: Int?) async throws -> [UsageRow] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.notice_sent, l.daily_limit, u.updated_at
                    FROM daily_usage u LEFT JOIN token_limits l ON l.push_token = u.push_token
                    WHERE u.day = ? ORDER BY u.successful + u.errors DESC, u.attempts DESC, u.push_token LIMIT ?
                    """,
                arguments: [day.description, top ?? -1]
            ).map(Self.usageRow)
        }
    }

    /// The token's recent days (newest first) and its override.
    public func history(pushToken: String, days: Int = 30) async throws -> (rows: [UsageRow], limitOverride: Int?) {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    \(TokenDays.cte)
                    SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.notice_sent, l.daily_limit, u.updated_at
                    FROM days CROSS JOIN daily_usage u ON u.day = days.day AND u.push_token = ?1
                    LEFT JOIN token_limits l ON l.push_token = u.push_token
                    ORDER BY u.day DESC LIMIT ?2
                    """,
                arguments: [pushToken, days]
            ).map(Self.usageRow)
            let override = try Int.fetchOne(db, sql: "SELECT daily_limit FROM token_limits WHERE push_token = ?", arguments: [pushToken])
            return (rows, override)
        }
    }

    /// Sets a per-token limit override (takes effect on the next request).
    public func setLimit(pushToken: String, limit: Int, now: Date = Date()) async throws {
        let cache = database.usageCache
        try await database.batcher.write { db in
            cache.metadataChanged(token: pushToken)
            try db.execute(
                sql: """
                    INSERT INTO token_limits (push_token, daily_limit, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (push_token) DO UPDATE SET daily_limit = excluded.daily_limit, updated_at = excluded.updated_at
                    """,
                arguments: [pushToken, limit, ISO8601UTC.string(now)]
            )
        }
    }

    /// Removes a per-token override. Returns whether one existed.
    @discardableResult
    public func clearLimit(pushToken: String) async throws -> Bool {
        let cache = database.usageCache
        return try await database.batcher.write { db in
            cache.metadataChanged(token: pushToken)
            try db.execute(sql: "DELETE FROM token_limits WHERE push_token = ?", arguments: [pushToken])
            return db.changesCount > 0
        }
    }

    /// Deletes the token's counters for a day (the notice may be sent again that day). Returns whether a row existed.
    @discardableResult
    public func reset(pushToken: String, day: UTCDay) async throws -> Bool {
        let cache = database.usageCache
        return try await database.batcher.write { db in
            try db.execute(sql: "DELETE FROM daily_usage WHERE day = ? AND push_token = ?", arguments: [day.description, pushToken])
            cache.forgetAll()
            return db.changesCount > 0
        }
    }

    /// How far past its oldest row a pruning step looks for expired delivery-log rows (rows logged late, after a kept
    /// one).
    static let pruneLookahead = 10_000

    /// The current cutoff's walk of the delivery log (`PruneLogWalk`).
    private let logWalk = Locked<PruneLogWalk?>(nil)

    /// Deletes at most `limit` expired rows in one group-committed transaction. Returns the rows deleted.
    public func pruneStep(today: UTCDay, retentionDays: Int, limit: Int) async throws -> Int {
        let cutoff = today.adding(days: -Int64(max(retentionDays, 0))).description
        let expiry = ISO8601UTC.string(today.start)
        let cache = database.usageCache
        var walk = logWalk.withLock { w in
            if w?.cutoff != cutoff { w = PruneLogWalk(cutoff: cutoff) }
            return w!
        }
        let walking = !walk.finished
        if walking {
            // The log's expired rows, wherever they sit, read on a reader (the writer is not held) a window at a time.
            walk.begin()
            var more = true
            while more {
                let from = walk.readFrom
                let rows = try await database.pool.read { db in
                    try Row.fetchAll(
                        db,
                        sql: "SELECT id, day < ? FROM delivery_log WHERE id > ? ORDER BY id LIMIT ?",
                        arguments: [cutoff, from, PruneLogWalk.window]
                    ).map { (id: $0[0] as Int64, expired: $0[1] as Bool) }
                }
                more = walk.read(rows, limit: limit)
            }
        }
        let found = walk.found
        let (deleted, taken) = try await database.batcher.write { db -> (Int, Int) in
            var n = 0
            var taken = 0
            // Every statement walks an index from its start and stops after `limit` rows: the step's cost does not
            // grow with the table. The usage key starts with the day.
            try db.execute(
                sql: """
                    DELETE FROM daily_usage WHERE (day, push_token) IN
                        (SELECT day, push_token FROM daily_usage WHERE day < ?1 ORDER BY day, push_token LIMIT ?2)
                    """,
                arguments: [cutoff, limit]
            )
            n += db.changesCount
            // Entries of a pruned day are never read again unless the clock goes back a day; forgotten anyway, once the
            // last of those days is gone.
            if n > 0 && n < limit { cache.forget(daysBefore: cutoff) }
            // The log has no index on day: the walk found its expired rows (`PruneLogWalk`). Once it has read the
            // whole log for this cutoff, rows logged late (a delivery that finished after midnight) are caught by a
            // bounded look past its oldest row.
            if n < limit && walking {
                let ids = found.prefix(limit - n)
                if !ids.isEmpty {
                    try db.execute(
                        sql: "DELETE FROM delivery_log WHERE id IN (\(ids.map(String.init).joined(separator: ","))) AND day < ?",
                        arguments: [cutoff]
                    )
                    n += db.changesCount
                }
                taken = ids.count
            } else if n < limit {
                try db.execute(
                    sql: """
                        DELETE FROM delivery_log WHERE id IN
                            (SELECT id FROM delivery_log WHERE id < (SELECT min(id) + ?3 FROM delivery_log) AND day < ?1
                             ORDER BY id LIMIT ?2)
                        """,
                    arguments: [cutoff, limit - n, Self.pruneLookahead]
                )
                n += db.changesCount
            }
            if n < limit {
                try db.execute(
                    sql: """
                        DELETE FROM dead_tokens WHERE push_token IN
                            (SELECT push_token FROM dead_tokens WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)
                        """,
                    arguments: [expiry, limit - n]
                )
                n += db.changesCount
            }
            return (n, taken)
        }
        if walking {
            _ = walk.take(room: taken)
            logWalk.withLock { w in if w?.cutoff == cutoff { w = walk } }
        }
        return deleted
    }

    private static func usageRow(_ r: Row) -> UsageRow {
        UsageRow(
            day: r[0],
            pushToken: r[1],
            appID: r[2],
            attempts: r[3],
            successful: r[4],
            errors: r[5],
            noticeSent: (r[6] as Int) != 0,
            limitOverride: r[7],
            updatedAt: r[8]
        )
    }
}
