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

    /// Deletes at most `limit` expired rows in one transaction (it takes row locks on expired rows only, which no
    /// request writes). Returns the rows deleted.
    public func pruneStep(today: UTCDay, retentionDays: Int, limit: Int) async throws -> Int {
        let cutoff = today.adding(days: -Int64(max(retentionDays, 0))).description
        let expiry = ISO8601UTC.string(today.start)
        let logger = engine.logger
        let lookahead = Self.pruneLookahead
        return try await engine.transaction { connection in
            func deleted(_ query: PostgresQuery) async throws -> Int {
                try await connection.query(query, logger: logger).collect().first?.decode(Int.self) ?? 0
            }
            // Each statement walks an index from its start and stops after `limit` rows: the step's cost does not grow
            // with the table. The log has no index on day: it is appended in time order, so its expired rows are at
            // its start, and rows logged late are caught by a bounded look past its oldest row.
            var n = try await deleted(
                """
                WITH d AS (DELETE FROM daily_usage WHERE (day, push_token) IN
                    (SELECT day, push_token FROM daily_usage WHERE day < \(cutoff) ORDER BY day, push_token LIMIT \(limit))
                    RETURNING 1)
                SELECT count(*) FROM d
                """
            )
            if n < limit {
                n += try await deleted(
                    """
                    WITH d AS (DELETE FROM delivery_log WHERE id IN
                        (SELECT id FROM delivery_log WHERE id < (SELECT min(id) FROM delivery_log) + \(lookahead) AND day < \(cutoff)
                         ORDER BY id LIMIT \(limit - n))
                        RETURNING 1)
                    SELECT count(*) FROM d
                    """
                )
            }
            if n < limit {
                n += try await deleted(
                    """
                    WITH d AS (DELETE FROM dead_tokens WHERE push_token IN
                        (SELECT push_token FROM dead_tokens WHERE expires_at <= \(expiry) ORDER BY expires_at LIMIT \(limit - n))
                        RETURNING 1)
                    SELECT count(*) FROM d
                    """
                )
            }
            return n
        }
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
