import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// Statements the SQLite stores share inside their transactions.
enum SQLiteRows {
    /// Inserts a delivery-log row and returns its id.
    @discardableResult
    static func insertLog(_ db: Database, _ r: DeliveryRecord, day: UTCDay) throws -> Int64 {
        var insert = try RawStatement(
            db,
            sql: """
                INSERT INTO delivery_log (at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        insert.bind(ISO8601UTC.string(r.at))
        insert.bind(day.description)
        insert.bind(r.pushToken)
        insert.bind(r.appID)
        insert.bind(r.platform?.rawValue)
        insert.bind(r.provider)
        insert.bind(r.kind.rawValue)
        insert.bind(r.counted)
        insert.bind(r.outcome.rawValue)
        insert.bind(r.messageID)
        insert.bind(r.errorMessage)
        insert.bind(r.payload)
        try insert.execute()
        return db.lastInsertedRowID
    }

    /// Stores a dead-token mark, and has the usage cache read the token's dead-token state again.
    static func insertDead(_ db: Database, _ cache: SQLiteUsageCache, token: String, mark: DeadMark, now: Date) throws {
        cache.metadataChanged(token: token)
        try db.cachedStatement(
            sql: """
                INSERT INTO dead_tokens (push_token, provider, reason, message, marked_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (push_token) DO UPDATE SET provider = excluded.provider, reason = excluded.reason,
                    message = excluded.message, marked_at = excluded.marked_at, expires_at = excluded.expires_at
                """
        ).execute(arguments: [token, mark.provider, mark.reason, mark.message, ISO8601UTC.string(now), ISO8601UTC.string(mark.until)])
    }

    /// The dead-token entry for a token, if one is live at `now` (an ISO 8601 UTC stamp).
    static func deadToken(_ db: Database, token: String, now: String) throws -> DeadToken? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT provider, reason, message, marked_at, expires_at FROM dead_tokens WHERE push_token = ? AND expires_at > ?
                    """
            ),
            arguments: [token, now]
        ).map { DeadToken(provider: $0[0], reason: $0[1], message: $0[2], markedAt: $0[3], expiresAt: $0[4]) }
    }
}
