import Foundation
import GRDB
import PushRelayCore
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// `channel_bindings` in a real SQLite file: the seed an upgrade from a build before bindings gets.
@Suite struct SQLitePushChannelBindingTests {
    static func open(_ path: String = TempPath.make()) throws -> PushRelayDatabase {
        let db = try PushRelayDatabase(path: path)
        _ = try db.migrate()
        return db
    }

    @Test func upgradingSeedsTheLatestPairOfEachTokenAndWebhookFromTheLedger() async throws {
        let path = TempPath.make()
        let db = try PushRelayDatabase(path: path)
        let all = PushRelayDatabase.migrations.sorted { $0.version < $1.version }
        _ = try db.migrate(all.filter { $0.version < 8 })
        try await db.pool.write { db in
            for (day, token, webhook, at) in [
                ("2026-11-20", "old-token", "hook-1", "2026-11-20T10:00:00.000Z"),
                ("2026-11-21", "new-token", "hook-1", "2026-11-21T10:00:00.000Z"),  // token refresh: hook-1 is new-token's
                ("2026-11-21", "moving", "hook-a", "2026-11-21T09:00:00.000Z"),
                ("2026-11-22", "moving", "hook-b", "2026-11-22T09:00:00.000Z"),  // re-registration: moving is hook-b's
            ] {
                try db.execute(
                    sql: "INSERT INTO daily_usage (day, push_token, webhook_id, updated_at) VALUES (?, ?, ?, ?)",
                    arguments: [day, token, webhook, at]
                )
            }
        }
        _ = try db.migrate(all)
        let bindings = try await SQLitePushChannelStore(database: db).bindings()
        #expect(Set(bindings) == [.init(pushToken: "new-token", webhookID: "hook-1"), .init(pushToken: "moving", webhookID: "hook-b")])
    }
}
