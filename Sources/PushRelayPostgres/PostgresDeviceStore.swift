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

    /// SQL for the live API key that holds a token: the one that registered it first (the older key of two
    /// registrations in the same millisecond). `column` is `push_token` or `voip_token`; `token` is the SQL for the
    /// token (a parameter, or a column of the outer statement).
    private static func holder(_ column: String, of token: String) -> String {
        """
        SELECT o.api_key_id FROM call_devices o JOIN api_keys k ON k.id = o.api_key_id
        WHERE o.\(column) = \(token) AND k.revoked_at IS NULL ORDER BY o.created_at, o.api_key_id LIMIT 1
        """
    }

    /// Stores the device unless another live key holds its push or VoIP token, in one transaction that first takes a
    /// transaction-scoped advisory lock on each token (in a fixed order): two registrations of one token, on any
    /// instance, wait for each other even while no row has it yet, and the second sees the first's device.
    public func addDevice(_ d: CallDevice, now: Date) async throws -> CallDeviceRegistration {
        let key = Data(d.encryptionKey).base64EncodedString()
        let platform = d.platform.rawValue
        let stamp = ISO8601UTC.string(now)
        let logger = engine.logger
        let locks = (["call-push:" + d.pushToken] + (d.voipToken.map { ["call-voip:" + $0] } ?? [])).sorted()
        return try await engine.transaction { connection -> CallDeviceRegistration in
            for lock in locks {
                _ = try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lock), 0))", logger: logger).collect()
            }
            let holders = try await connection.query(
                """
                SELECT (\(unescaped: Self.holder("push_token", of: "t.push"))), (\(unescaped: Self.holder("voip_token", of: "t.voip")))
                FROM (VALUES (\(d.pushToken)::text, \(d.voipToken)::text)) AS t (push, voip)
                """,
                logger: logger
            ).collect()
            let (pushHolder, voipHolder) = try holders.first?.decode((Int64?, Int64?).self) ?? (nil, nil)
            if let pushHolder, pushHolder != d.apiKeyID { return .pushTokenHeldByAnotherKey }
            if let voipHolder, voipHolder != d.apiKeyID { return .voipTokenHeldByAnotherKey }
            _ = try await connection.query(
                """
                INSERT INTO call_devices (id, api_key_id, platform, app_id, push_token, voip_token, label, webhook_id, encryption_key, created_at)
                VALUES (\(d.id), \(d.apiKeyID), \(platform), \(d.appID), \(d.pushToken), \(d.voipToken), \(d.label), \(d.webhookID), \(key), \(stamp))
                """,
                logger: logger
            ).collect()
            return .added
        }
    }

    /// The device, if it belongs to `apiKeyID` and that key holds its push token and its VoIP token.
    public func device(id: String, apiKeyID: Int64) async throws -> CallDevice? {
        try await engine.rows(
            """
            SELECT d.id, d.api_key_id, d.platform, d.app_id, d.push_token, d.voip_token, d.label, d.encryption_key, d.webhook_id
            FROM call_devices d WHERE d.id = \(id) AND d.api_key_id = \(apiKeyID)
            AND d.api_key_id = (\(unescaped: Self.holder("push_token", of: "d.push_token")))
            AND (d.voip_token IS NULL OR d.api_key_id = (\(unescaped: Self.holder("voip_token", of: "d.voip_token"))))
            """,
            write: false
        ).first.map { row in
            let (id, keyID, platform, app, token, voip, label, key, webhook) = try row.decode(
                (String, Int64, String, String, String, String?, String?, String, String?).self
            )
            return try CallDevice.reading(
                id: id,
                apiKeyID: keyID,
                platform: platform,
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

    /// The key of the newest device with this push token of the key that holds it; with no live holder, of the newest
    /// device with it. One statement, by the push-token index.
    public func encryptionKey(forPushToken token: String) async throws -> [UInt8]? {
        try await engine.rows(
            """
            SELECT d.encryption_key FROM call_devices d
            WHERE d.push_token = \(token) AND d.api_key_id = coalesce((\(unescaped: Self.holder("push_token", of: "d.push_token"))), d.api_key_id)
            ORDER BY d.created_at DESC LIMIT 1
            """,
            write: false
        ).first.flatMap { Data(base64Encoded: try $0.decode(String.self)) }.map(Array.init)
    }
}
