import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// PostgreSQL side of the calls API: API keys (stored as SHA-256 digests) and registered devices with their
/// encryption keys.
public final class PostgresDeviceStore: CallDeviceStorage, APIKeyStorage {
    let engine: PostgresStorageEngine

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
    }

    // MARK: API keys

    public func createAPIKey(label: String?, now: Date) async throws -> (key: String, id: Int64) {
        let key = "prk_" + RandomSecret.base64URL(bytes: 32)
        let hash = PostgresRows.digest(key)
        let stamp = ISO8601UTC.string(now)
        let rows = try await engine.rows(
            "INSERT INTO api_keys (key_hash, label, created_at) VALUES (\(hash), \(label), \(stamp)) RETURNING id",
            write: true
        )
        return (key, try rows.first?.decode(Int64.self) ?? 0)
    }

    /// Looked up by digest: the comparison never touches the secret itself.
    public func apiKeyID(forKey key: String) async throws -> Int64? {
        let hash = PostgresRows.digest(key)
        return try await engine.rows("SELECT id FROM api_keys WHERE key_hash = \(hash) AND revoked_at IS NULL", write: false)
            .first?.decode(Int64.self)
    }

    public func listAPIKeys() async throws -> [APIKeyInfo] {
        try await engine.rows("SELECT id, label, created_at, revoked_at FROM api_keys ORDER BY id", write: false).map {
            let (id, label, created, revoked) = try $0.decode((Int64, String?, String, String?).self)
            return APIKeyInfo(id: id, label: label, createdAt: created, revokedAt: revoked)
        }
    }

    public func revokeAPIKey(id: Int64, now: Date) async throws -> Bool {
        let stamp = ISO8601UTC.string(now)
        return try await engine.changes("UPDATE api_keys SET revoked_at = \(stamp) WHERE id = \(id) AND revoked_at IS NULL RETURNING 1") > 0
    }

    // MARK: Devices

    public func addDevice(_ d: CallDevice, now: Date) async throws {
        let key = Data(d.encryptionKey).base64EncodedString()
        let platform = d.platform.rawValue
        let stamp = ISO8601UTC.string(now)
        try await engine.rows(
            """
            INSERT INTO call_devices (id, api_key_id, platform, app_id, push_token, voip_token, label, webhook_id, encryption_key, created_at)
            VALUES (\(d.id), \(d.apiKeyID), \(platform), \(d.appID), \(d.pushToken), \(d.voipToken), \(d.label), \(d.webhookID), \(key), \(stamp))
            """,
            write: true
        )
    }

    public func device(id: String, apiKeyID: Int64) async throws -> CallDevice? {
        try await engine.rows(
            """
            SELECT id, api_key_id, platform, app_id, push_token, voip_token, label, encryption_key, webhook_id
            FROM call_devices WHERE id = \(id) AND api_key_id = \(apiKeyID)
            """,
            write: false
        ).first.map { row in
            let (id, keyID, platform, app, token, voip, label, key, webhook) = try row.decode(
                (String, Int64, String, String, String, String?, String?, String, String?).self
            )
            return CallDevice(
                id: id,
                apiKeyID: keyID,
                platform: HAPlatform(rawValue: platform) ?? .android,
                appID: app,
                pushToken: token,
                voipToken: voip,
                label: label,
                webhookID: webhook,
                encryptionKey: Data(base64Encoded: key).map(Array.init) ?? []
            )
        }
    }

    public func deleteDevice(id: String, apiKeyID: Int64) async throws -> Bool {
        try await engine.changes("DELETE FROM call_devices WHERE id = \(id) AND api_key_id = \(apiKeyID) RETURNING 1") > 0
    }

    public func rotateKey(id: String, apiKeyID: Int64, key: [UInt8], now: Date) async throws -> Bool {
        let encoded = Data(key).base64EncodedString()
        let stamp = ISO8601UTC.string(now)
        return try await engine.changes(
            """
            UPDATE call_devices SET encryption_key = \(encoded), key_rotated_at = \(stamp) WHERE id = \(id) AND api_key_id = \(apiKeyID)
            RETURNING 1
            """
        ) > 0
    }

    /// The key of the newest live device registered with this push token (any API key).
    public func encryptionKey(forPushToken token: String) async throws -> [UInt8]? {
        try await engine.rows(
            "SELECT encryption_key FROM call_devices WHERE push_token = \(token) ORDER BY created_at DESC LIMIT 1",
            write: false
        ).first.flatMap { Data(base64Encoded: try $0.decode(String.self)) }.map(Array.init)
    }
}
