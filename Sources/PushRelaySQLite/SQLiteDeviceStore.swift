import Crypto
import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// SQLite side of the VoIP API: API keys (hashed) and registered devices with their encryption keys.
public final class SQLiteDeviceStore: CallDeviceStorage, APIKeyStorage {
    public let database: PushRelayDatabase
    private var pool: DatabasePool { database.pool }

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    // MARK: API keys

    static func hash(_ key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Creates a random API key; returns the key (shown once) and its id.
    public func createAPIKey(label: String?, now: Date = Date()) async throws -> (key: String, id: Int64) {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let key =
            "prk_"
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let hash = Self.hash(key)
        let id = try await database.batcher.write { db -> Int64 in
            try db.execute(
                sql: "INSERT INTO api_keys (key_hash, label, created_at) VALUES (?, ?, ?)",
                arguments: [hash, label, ISO8601UTC.string(now)]
            )
            return db.lastInsertedRowID
        }
        return (key, id)
    }

    /// The id of a live (not revoked) API key, looked up by its hash.
    public func apiKeyID(forKey key: String) async throws -> Int64? {
        let hash = Self.hash(key)
        return try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL", arguments: [hash])
        }
    }

    public func listAPIKeys() async throws -> [APIKeyInfo] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, label, created_at, revoked_at FROM api_keys ORDER BY id").map {
                APIKeyInfo(id: $0[0], label: $0[1], createdAt: $0[2], revokedAt: $0[3])
            }
        }
    }

    @discardableResult
    public func revokeAPIKey(id: Int64, now: Date = Date()) async throws -> Bool {
        try await database.batcher.write { db in
            try db.execute(sql: "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [ISO8601UTC.string(now), id])
            return db.changesCount > 0
        }
    }

    // MARK: Devices

    /// A query for the live API key that holds a token: the one that registered it first (the older key of two
    /// registrations in the same millisecond). `column` is `push_token` or `voip_token`; `token` is the SQL for the
    /// token (a parameter, or a column of the outer statement).
    private static func holder(_ column: String, of token: String) -> String {
        """
        SELECT o.api_key_id FROM call_devices o JOIN api_keys k ON k.id = o.api_key_id
        WHERE o.\(column) = \(token) AND k.revoked_at IS NULL ORDER BY o.created_at, o.api_key_id LIMIT 1
        """
    }

    /// Stores the device unless another live key holds its push or VoIP token. The check and the insert are one write
    /// transaction, and SQLite runs one at a time.
    @discardableResult
    public func addDevice(_ d: CallDevice, now: Date = Date()) async throws -> CallDeviceRegistration {
        let key = Data(d.encryptionKey).base64EncodedString()
        return try await database.batcher.write { db -> CallDeviceRegistration in
            let holders = try Row.fetchOne(
                db,
                sql: "SELECT (\(Self.holder("push_token", of: ":push"))), (\(Self.holder("voip_token", of: ":voip")))",
                arguments: ["push": d.pushToken, "voip": d.voipToken]
            )
            if let holder: Int64 = holders?[0], holder != d.apiKeyID { return .pushTokenHeldByAnotherKey }
            if let holder: Int64 = holders?[1], holder != d.apiKeyID { return .voipTokenHeldByAnotherKey }
            try db.execute(
                sql: """
                    INSERT INTO call_devices (id, api_key_id, platform, app_id, push_token, voip_token, label, webhook_id, encryption_key, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    d.id, d.apiKeyID, d.platform.rawValue, d.appID, d.pushToken, d.voipToken, d.label, d.webhookID, key, ISO8601UTC.string(now),
                ]
            )
            return .added
        }
    }

    /// The device, if it belongs to `apiKeyID` and that key holds its push token and its VoIP token.
    public func device(id: String, apiKeyID: Int64) async throws -> CallDevice? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT d.id, d.api_key_id, d.platform, d.app_id, d.push_token, d.voip_token, d.label, d.encryption_key, d.webhook_id
                    FROM call_devices d WHERE d.id = ? AND d.api_key_id = ?
                    AND d.api_key_id = (\(Self.holder("push_token", of: "d.push_token")))
                    AND (d.voip_token IS NULL OR d.api_key_id = (\(Self.holder("voip_token", of: "d.voip_token"))))
                    """,
                arguments: [id, apiKeyID]
            ).map { row in
                try CallDevice.reading(
                    id: row[0],
                    apiKeyID: row[1],
                    platform: row[2],
                    appID: row[3],
                    pushToken: row[4],
                    voipToken: row[5],
                    label: row[6],
                    webhookID: row[8],
                    encryptionKey: Data(base64Encoded: row[7] as String).map(Array.init) ?? []
                )
            }
        }
    }

    @discardableResult
    public func deleteDevice(id: String, apiKeyID: Int64) async throws -> Bool {
        try await database.batcher.write { db in
            try db.execute(sql: "DELETE FROM call_devices WHERE id = ? AND api_key_id = ?", arguments: [id, apiKeyID])
            return db.changesCount > 0
        }
    }

    /// Replaces the device's key. Returns false for an unknown device.
    @discardableResult
    public func rotateKey(id: String, apiKeyID: Int64, key: [UInt8], now: Date = Date()) async throws -> Bool {
        let encoded = Data(key).base64EncodedString()
        return try await database.batcher.write { db in
            try db.execute(
                sql: "UPDATE call_devices SET encryption_key = ?, key_rotated_at = ? WHERE id = ? AND api_key_id = ?",
                arguments: [encoded, ISO8601UTC.string(now), id, apiKeyID]
            )
            return db.changesCount > 0
        }
    }

    /// The key of the newest device with this push token of the key that holds it; with no live holder, of the newest
    /// device with it. One statement: the holder is looked up once, by the push-token index.
    public func encryptionKey(forPushToken token: String) async throws -> [UInt8]? {
        try await pool.read { db in
            try String.fetchOne(
                db,
                sql: """
                    SELECT d.encryption_key FROM call_devices d
                    WHERE d.push_token = :token AND d.api_key_id = coalesce((\(Self.holder("push_token", of: ":token"))), d.api_key_id)
                    ORDER BY d.created_at DESC LIMIT 1
                    """,
                arguments: ["token": token]
            ).flatMap { Data(base64Encoded: $0) }.map(Array.init)
        }
    }
}
