import Foundation
import GRDB
import PushRelayCore
import PushRelayTestHarness
import Testing

@testable import PushRelaySQLite
@testable import PushRelayStore

/// Migration 014 renames `voip_devices` to `call_devices` and drops its never-written `dead_at`: a device registered
/// before the upgrade is still there after it, with its key, and new registrations go to the new table.
@Suite struct CallDevicesMigrationTests {
    @Test func aDeviceRegisteredBeforeTheRenameIsKept() async throws {
        let path = TempPath.make()
        let database = try PushRelayDatabase(path: path)
        _ = try database.migrate(PushRelayDatabase.migrations.filter { $0.version < 14 })
        let store = SQLiteDeviceStore(database: database)
        let key = try await store.createAPIKey(label: "before")
        let device = CallDevice(
            id: "0f6c2d54-8f1e-4b7a-9d55-3a1c1f6b9e01",
            apiKeyID: key.id,
            platform: .ios,
            appID: "io.robbie.HomeAssistant",
            pushToken: "before-upgrade-token",
            voipToken: "voip-before",
            label: "phone",
            webhookID: "hook-1",
            encryptionKey: Array(repeating: 7, count: 32)
        )
        // As the previous schema's registration wrote it.
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO voip_devices (id, api_key_id, platform, app_id, push_token, voip_token, label, webhook_id, encryption_key, created_at)
                    VALUES (?, ?, 'ios', ?, ?, ?, ?, ?, ?, '2026-11-01T00:00:00Z')
                    """,
                arguments: [
                    device.id, key.id, device.appID, device.pushToken, device.voipToken, device.label, device.webhookID,
                    Data(device.encryptionKey).base64EncodedString(),
                ]
            )
        }

        #expect(try database.migrate().contains { $0.hasPrefix("014") })
        #expect(try await store.device(id: device.id, apiKeyID: key.id) == device)
        #expect(try await store.encryptionKey(forPushToken: "before-upgrade-token") == device.encryptionKey)
        let tables = try await database.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
        #expect(tables.contains("call_devices"))
        #expect(!tables.contains("voip_devices"))
        let columns = try await database.pool.read { db in try db.columns(in: "call_devices").map { $0.name } }
        #expect(!columns.contains("dead_at"))
        try database.close()
    }
}
