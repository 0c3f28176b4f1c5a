import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// PostgreSQL's quota administration: per-day usage lists, a token's history, overrides, resets and pruning.
public final class PostgresQuotaAdministration: QuotaAdministration {
    let engine: PostgresStorageEngine

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
    }

    public func list(day: UTCDay, top: Int?) async throws -> [UsageRow] {
        let dayKey = day.description
        return try await engine.rows(
            """
            SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.notice_sent, l.daily_limit, u.updated_at
            FROM daily_usage u LEFT JOIN token_limits l ON l.push_token = u.push_token
            WHERE u.day = \(dayKey) ORDER BY u.successful + u.errors DESC, u.attempts DESC, u.push_token LIMIT \(top)
            """,
            write: false
        ).map(Self.usageRow)
    }

    public func history(pushToken: String, days: Int) async throws -> (rows: [UsageRow], limitOverride: Int?) {
        let rows = try await engine.rows(
            """
            SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.notice_sent, l.daily_limit, u.updated_at
            FROM daily_usage u LEFT JOIN token_limits l ON l.push_token = u.push_token
            WHERE u.push_token = \(pushToken) ORDER BY u.day DESC LIMIT \(days)
            """,
            write: false
        ).map(Self.usageRow)
        let override = try await engine.rows("SELECT daily_limit FROM token_limits WHERE push_token = \(pushToken)", write: false)
            .first?.decode(Int.self)
        return (rows, override)
    }

    public func setLimit(pushToken: String, limit: Int, now: Date) async throws {
        let stamp = ISO8601UTC.string(now)
        try await engine.rows(
            """
            INSERT INTO token_limits (push_token, daily_limit, updated_at) VALUES (\(pushToken), \(limit), \(stamp))
            ON CONFLICT (push_token) DO UPDATE SET daily_limit = excluded.daily_limit, updated_at = excluded.updated_at
            """,
            write: true
        )
    }

    @discardableResult
    public func clearLimit(pushToken: String) async throws -> Bool {
        try await engine.changes("DELETE FROM token_limits WHERE push_token = \(pushToken) RETURNING 1") > 0
    }

    @discardableResult
    public func reset(pushToken: String, day: UTCDay) async throws -> Bool {
        let dayKey = day.description
        return try await engine.changes("DELETE FROM daily_usage WHERE day = \(dayKey) AND push_token = \(pushToken) RETURNING 1") > 0
    }

    /// How far past its oldest row a pruning step looks for expired delivery-log rows (rows logged late, after a kept
    /// one).
    static let pruneLookahead = 10_000

    /// Where the steps of the current prune stopped. A step starts its index walks there, not at the start: PostgreSQL
    /// keeps a deleted row's index entry until autovacuum, so a walk from the start would pass every row the earlier
    /// steps deleted, and the steps would slow down as the prune goes on.
    private struct PruneCursor: Sendable {
        var cutoff: String
        var usage = (day: "", token: "")
    }

    private let pruneCursor = Locked<PruneCursor?>(nil)
    /// The current cutoff's walk of the delivery log (`PruneLogWalk`; it goes on where the last step stopped, too).
    private let logWalk = Locked<PruneLogWalk?>(nil)

    /// Deletes at most `limit` expired rows in one transaction (it takes row locks on expired rows only, which no
    /// request writes). Returns the rows deleted.
    public func pruneStep(today: UTCDay, retentionDays: Int, limit: Int) async throws -> Int {
        let cutoff = today.adding(days: -Int64(max(retentionDays, 0))).description
        let expiry = ISO8601UTC.string(today.start)
        let logger = engine.logger
        let lookahead = Int64(Self.pruneLookahead)
        let start = pruneCursor.withLock { c in
            if c?.cutoff != cutoff { c = PruneCursor(cutoff: cutoff) }
            return c!
        }
        var walk = logWalk.withLock { w in
            if w?.cutoff != cutoff { w = PruneLogWalk(cutoff: cutoff) }
            return w!
        }
        let walking = !walk.finished
        if walking {
            // The log's expired rows, wherever they sit, read outside the transaction a window at a time by its key.
            walk.begin()
            var more = true
            while more {
                let rows = try await engine.rows(
                    "SELECT id, day < \(cutoff) FROM delivery_log WHERE id > \(walk.readFrom) ORDER BY id LIMIT \(PruneLogWalk.window)",
                    write: false
                )
                more = walk.read(try rows.map { row in try row.decode((Int64, Bool).self) }.map { (id: $0.0, expired: $0.1) }, limit: limit)
            }
        }
        let found = walk.found
        let (n, end, taken) = try await engine.transaction { connection -> (Int, PruneCursor, Int) in
            var end = start
            var taken = 0
            // Each statement walks an index from where the last step stopped and stops after `limit` rows: the step's
            // cost does not grow with the table. The log has no index on day: the walk found its expired rows
            // (`PruneLogWalk`); once it has read the whole log for this cutoff, rows logged late are caught by a bounded
            // look past its oldest row.
            let (afterDay, afterToken) = start.usage
            let usage = try await connection.query(
                """
                WITH d AS (DELETE FROM daily_usage WHERE (day, push_token) IN
                    (SELECT day, push_token FROM daily_usage WHERE day < \(cutoff) AND (day, push_token) > (\(afterDay), \(afterToken))
                     ORDER BY day, push_token LIMIT \(limit))
                    RETURNING day, push_token)
                SELECT count(*), (array_agg(day ORDER BY day DESC, push_token DESC))[1],
                       (array_agg(push_token ORDER BY day DESC, push_token DESC))[1]
                FROM d
                """,
                logger: logger
            ).collect().first?.decode((Int, String?, String?).self)
            var n = usage?.0 ?? 0
            if let day = usage?.1, let token = usage?.2 { end.usage = (day, token) }
            if n < limit && walking {
                let ids = Array(found.prefix(limit - n))
                if !ids.isEmpty {
                    n +=
                        try await connection.query(
                            """
                            WITH d AS (DELETE FROM delivery_log WHERE id = ANY(\(ids)) AND day < \(cutoff) RETURNING 1)
                            SELECT count(*) FROM d
                            """,
                            logger: logger
                        ).collect().first?.decode(Int.self) ?? 0
                }
                taken = ids.count
            } else if n < limit {
                n +=
                    try await connection.query(
                        """
                        WITH d AS (DELETE FROM delivery_log WHERE id IN
                            (SELECT id FROM delivery_log
                             WHERE id < (SELECT min(id) FROM delivery_log) + \(lookahead) AND day < \(cutoff)
                             ORDER BY id LIMIT \(limit - n))
                            RETURNING 1)
                        SELECT count(*) FROM d
                        """,
                        logger: logger
                    ).collect().first?.decode(Int.self) ?? 0
            }
            if n < limit {
                n +=
                    try await connection.query(
                        """
                        WITH d AS (DELETE FROM dead_tokens WHERE push_token IN
                            (SELECT push_token FROM dead_tokens WHERE expires_at <= \(expiry) ORDER BY expires_at LIMIT \(limit - n))
                            RETURNING 1)
                        SELECT count(*) FROM d
                        """,
                        logger: logger
                    ).collect().first?.decode(Int.self) ?? 0
            }
            return (n, end, taken)
        }
        // A prune that found nothing more to delete starts from the beginning next time.
        pruneCursor.withLock { $0 = n < limit ? nil : end }
        if walking {
            _ = walk.take(room: taken)
            logWalk.withLock { w in if w?.cutoff == cutoff { w = walk } }
        }
        return n
    }

    private static func usageRow(_ row: PostgresRow) throws -> UsageRow {
        let (day, token, app, attempts, successful, errors, notice, override, updated) = try row.decode(
            (String, String, String?, Int, Int, Int, Int, Int?, String).self
        )
        return UsageRow(
            day: day,
            pushToken: token,
            appID: app,
            attempts: attempts,
            successful: successful,
            errors: errors,
            noticeSent: notice != 0,
            limitOverride: override,
            updatedAt: updated
        )
    }
}
