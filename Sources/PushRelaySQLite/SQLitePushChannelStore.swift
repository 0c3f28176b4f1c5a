import Crypto
import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// SQLite side of the push channel: channel tokens, messages owed to devices, push-channel counters.
public final class SQLitePushChannelStore: PushChannelStorage {
    public let database: PushRelayDatabase
    var pool: DatabasePool { database.pool }

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    // MARK: Tokens

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Creates a random channel token bound to `webhookID`; returns the token (shown once) and its id.
    public func createToken(webhookID: String, label: String?, now: Date = Date()) async throws -> (token: String, id: Int64) {
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let token =
            "prc_"
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let hash = Self.hash(token)
        let id = try await database.batcher.write { db -> Int64 in
            try db.execute(
                sql: "INSERT INTO channel_tokens (webhook_id, token_hash, label, created_at) VALUES (?, ?, ?, ?)",
                arguments: [webhookID, hash, label, ISO8601UTC.string(now)]
            )
            return db.lastInsertedRowID
        }
        return (token, id)
    }

    /// The webhook id a live (not revoked) channel token is bound to. Looked up by hash: the comparison never
    /// touches the secret itself, so its timing says nothing about it.
    public func webhookID(forChannelToken token: String) async throws -> String? {
        let hash = Self.hash(token)
        return try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT webhook_id FROM channel_tokens WHERE token_hash = ? AND revoked_at IS NULL", arguments: [hash])
        }
    }

    /// Revokes by id. Returns whether a live token was revoked.
    @discardableResult
    public func revokeToken(id: Int64, now: Date = Date()) async throws -> Bool {
        try await database.batcher.write { db in
            try db.execute(
                sql: "UPDATE channel_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [ISO8601UTC.string(now), id]
            )
            return db.changesCount > 0
        }
    }

    public func listTokens() async throws -> [PushChannelTokenInfo] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, webhook_id, label, created_at, revoked_at FROM channel_tokens ORDER BY id").map {
                PushChannelTokenInfo(id: $0[0], webhookID: $0[1], label: $0[2], createdAt: $0[3], revokedAt: $0[4])
            }
        }
    }

    // MARK: Messages

    /// Stores (or replaces) a message, and optionally bumps a push-channel counter, in one group-committed transaction.
    public func save(_ m: PushChannelMessage, count: PushChannelCounter? = nil) async throws {
        try await enqueueSave(m, count: count).value
    }

    /// Queues the save now and returns at once: writes queued later (a confirm's delete) commit after it.
    public func enqueueSave(_ m: PushChannelMessage, count: PushChannelCounter? = nil) -> WriteTicket<Void> {
        database.batcher.submit { db in
            try Self.upsert(db, m)
            if let count { try Self.bump(db, count, token: m.pushToken, at: m.createdAt) }
        }
    }

    /// Deletes a message. Returns whether it existed.
    @discardableResult
    public func remove(id: String, count: PushChannelCounter? = nil, token: String? = nil, now: Date = Date()) async throws -> Bool {
        try await database.batcher.write { db in
            try db.cachedStatement(sql: "DELETE FROM channel_messages WHERE id = ?").execute(arguments: [id])
            let existed = db.changesCount > 0
            if let count, let token { try Self.bump(db, count, token: token, at: now) }
            return existed
        }
    }

    /// Bumps a push-channel counter for the token's UTC day (queued; await the ticket for the commit).
    @discardableResult
    public func count(_ counter: PushChannelCounter, token: String, now: Date) -> WriteTicket<Void> {
        database.batcher.submit { db in try Self.bump(db, counter, token: token, at: now) }
    }

    /// Messages owed to a webhook id (channel tokens) or a push token (push-token credentials), oldest first.
    public func pending(webhookID: String?, pushToken: String?) async throws -> [PushChannelMessage] {
        try await pool.read { db in
            if let pushToken {
                return try Row.fetchAll(db, sql: "SELECT * FROM channel_messages WHERE push_token = ? ORDER BY created_at", arguments: [pushToken])
                    .compactMap { try? Self.message($0) }
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM channel_messages WHERE webhook_id = ? ORDER BY created_at", arguments: [webhookID ?? ""])
                .compactMap { try? Self.message($0) }
        }
    }

    /// Every stored message (for recovery at start).
    public func all() async throws -> [PushChannelMessage] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM channel_messages ORDER BY created_at").compactMap { try? Self.message($0) }
        }
    }

    /// Deletes messages past `expires_at`, counting each as dropped. Returns how many.
    @discardableResult
    public func dropExpired(now: Date) async throws -> Int {
        let stamp = ISO8601UTC.string(now)
        return try await database.batcher.write { db in
            let expired = try Row.fetchAll(db, sql: "SELECT push_token FROM channel_messages WHERE expires_at <= ?", arguments: [stamp])
            for row in expired { try Self.bump(db, .dropped, token: row[0], at: now) }
            try db.execute(sql: "DELETE FROM channel_messages WHERE expires_at <= ?", arguments: [stamp])
            return expired.count
        }
    }

    /// The push-channel counters of a token for a day.
    public func counters(pushToken: String, day: UTCDay) async throws -> (delivered: Int, fallbacks: Int, dropped: Int) {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT local_delivered, local_fallbacks, local_dropped FROM daily_usage WHERE day = ? AND push_token = ?
                        """,
                    arguments: [day.description, pushToken]
                )
            else { return (0, 0, 0) }
            return (row[0], row[1], row[2])
        }
    }

    /// How many messages are stored for `pushToken` (the `push_token` index alone answers).
    public func storedCount(pushToken: String) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM channel_messages WHERE push_token = ?", arguments: [pushToken]) ?? 0
        }
    }

    /// The UTF-8 bytes of every stored notification (a scan of the table).
    public func storedBytes() async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(LENGTH(CAST(notification AS BLOB))), 0) FROM channel_messages") ?? 0
        }
    }

    private static func upsert(_ db: Database, _ m: PushChannelMessage) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO channel_messages (id, webhook_id, push_token, platform, notification, state, fallback, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET state = excluded.state, fallback = excluded.fallback, webhook_id = excluded.webhook_id
                """
        ).execute(arguments: [
            m.id, m.webhookID, m.pushToken, m.platform.rawValue, m.notification.jsonString(), m.state.rawValue,
            m.fallback ? 1 : 0, ISO8601UTC.string(m.createdAt), ISO8601UTC.string(m.expiresAt),
        ])
    }

    private static func bump(_ db: Database, _ counter: PushChannelCounter, token: String, at: Date) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO daily_usage (day, push_token, \(counter.rawValue), updated_at) VALUES (?, ?, 1, ?)
                ON CONFLICT (day, push_token) DO UPDATE SET \(counter.rawValue) = \(counter.rawValue) + 1, updated_at = excluded.updated_at
                """
        ).execute(arguments: [UTCDay(at).description, token, ISO8601UTC.string(at)])
    }

    private static func message(_ r: Row) throws -> PushChannelMessage {
        try PushChannelMessage.reading(
            id: r["id"],
            webhookID: r["webhook_id"],
            pushToken: r["push_token"],
            platform: r["platform"],
            notification: r["notification"],
            state: r["state"],
            fallback: (r["fallback"] as Int) != 0,
            createdAt: r["created_at"],
            expiresAt: r["expires_at"]
        )
    }
}
