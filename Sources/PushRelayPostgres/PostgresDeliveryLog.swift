import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// PostgreSQL's delivery log and dead-token memory.
public final class PostgresDeliveryLog: DeliveryLog {
    let engine: PostgresStorageEngine

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
    }

    public func deadToken(_ pushToken: String, now: Date) async throws -> DeadToken? {
        try await engine.rows(PostgresRows.deadToken(token: pushToken, now: now), write: false).first.map(PostgresRows.deadToken)
    }

    public func markDead(_ pushToken: String, _ mark: DeadMark, now: Date) async throws {
        try await engine.rows(PostgresRows.insertDead(token: pushToken, mark: mark, now: now), write: true)
    }

    @discardableResult
    public func forgetDead(_ pushToken: String) async throws -> Bool {
        try await engine.changes("DELETE FROM dead_tokens WHERE push_token = \(pushToken) RETURNING 1") > 0
    }

    public func log(_ record: DeliveryRecord) async throws {
        try await engine.rows(PostgresRows.insertLog(record, day: UTCDay(record.at)), write: true)
    }

    public func flush() async throws {
        try await engine.flush()
    }

    public func recentDeliveries(pushToken: String?, limit: Int) async throws -> [LoggedDelivery] {
        try await flush()
        let rows = try await engine.rows(
            """
            SELECT id, at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload
            FROM delivery_log WHERE (\(pushToken)::text IS NULL OR push_token = \(pushToken)) ORDER BY id DESC LIMIT \(limit)
            """,
            write: false
        )
        return try rows.map { row in
            let (id, at, day, token, app, platform, provider, kind, counted, outcome, messageID, errorMessage, payload) = try row.decode(
                (Int64, String, String, String, String?, String?, String, String, Int, String, String?, String?, String?).self
            )
            return try LoggedDelivery.reading(
                id: id,
                at: at,
                day: day,
                pushToken: token,
                appID: app,
                platform: platform,
                provider: provider,
                kind: kind,
                counted: counted != 0,
                outcome: outcome,
                messageID: messageID,
                errorMessage: errorMessage,
                payload: payload
            )
        }
    }
}
