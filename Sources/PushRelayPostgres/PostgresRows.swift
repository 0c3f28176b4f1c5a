import Crypto
import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// Statements the PostgreSQL stores share.
enum PostgresRows {
    static func insertLog(_ r: DeliveryRecord, day: UTCDay) -> PostgresQuery {
        let at = ISO8601UTC.string(r.at)
        let dayKey = day.description
        let counted = r.counted ? 1 : 0
        return """
            INSERT INTO delivery_log (at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload)
            VALUES (\(at), \(dayKey), \(r.pushToken), \(r.appID), \(r.platform?.rawValue), \(r.provider), \(r.kind.rawValue), \(counted), \(r.outcome.rawValue),
                \(r.messageID), \(r.errorMessage), \(r.payload))
            """
    }

    static func insertDead(token: String, mark: DeadMark, now: Date) -> PostgresQuery {
        let marked = ISO8601UTC.string(now)
        let until = ISO8601UTC.string(mark.until)
        return """
            INSERT INTO dead_tokens (push_token, provider, reason, message, marked_at, expires_at)
            VALUES (\(token), \(mark.provider), \(mark.reason), \(mark.message), \(marked), \(until))
            ON CONFLICT (push_token) DO UPDATE SET provider = excluded.provider, reason = excluded.reason,
                message = excluded.message, marked_at = excluded.marked_at, expires_at = excluded.expires_at
            """
    }

    /// The dead-token entry of a token, if one is live at `now`.
    static func deadToken(token: String, now: Date) -> PostgresQuery {
        let stamp = ISO8601UTC.string(now)
        return "SELECT provider, reason, message, marked_at, expires_at FROM dead_tokens WHERE push_token = \(token) AND expires_at > \(stamp)"
    }

    static func deadToken(_ row: PostgresRow) throws -> DeadToken {
        let (provider, reason, message, marked, expires) = try row.decode((String, String, String?, String, String).self)
        return DeadToken(provider: provider, reason: reason, message: message, markedAt: marked, expiresAt: expires)
    }

    /// Hex SHA-256, as channel tokens and API keys are stored.
    static func digest(_ secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
