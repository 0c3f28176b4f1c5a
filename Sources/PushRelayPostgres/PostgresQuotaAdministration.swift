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

    /// Deletes usage and delivery-log days older than `retentionDays` before `today`, and expired dead tokens.
    @discardableResult
    public func prune(today: UTCDay, retentionDays: Int) async throws -> Int {
        let cutoff = today.adding(days: -Int64(max(retentionDays, 0))).description
        let expiry = ISO8601UTC.string(today.start)
        let logger = engine.logger
        // No time limit, and counted in the statement: a day of the log can be many rows.
        return try await engine.transaction(limit: nil) { connection in
            func deleted(_ query: PostgresQuery) async throws -> Int {
                try await connection.query(query, logger: logger).collect().first?.decode(Int.self) ?? 0
            }
            var n = try await deleted("WITH d AS (DELETE FROM daily_usage WHERE day < \(cutoff) RETURNING 1) SELECT count(*) FROM d")
            n += try await deleted("WITH d AS (DELETE FROM delivery_log WHERE day < \(cutoff) RETURNING 1) SELECT count(*) FROM d")
            n += try await deleted("WITH d AS (DELETE FROM dead_tokens WHERE expires_at <= \(expiry) RETURNING 1) SELECT count(*) FROM d")
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
