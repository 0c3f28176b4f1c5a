import Foundation
import GRDB
import PushRelayCore
import PushRelayStore
import Testing

/// `channel_bindings` in a real SQLite file: one pair per token and per webhook id, and the seed an upgrade gets.
@Suite struct ChannelBindingStoreTests {
    static func open(_ path: String = TestServer.tempPath()) throws -> PushRelayDatabase {
        let db = try PushRelayDatabase(path: path)
        _ = try db.migrate()
        return db
    }

    @Test func bindReplacesTheTokensAndTheWebhooksFormerPairs() async throws {
        let store = ChannelStore(database: try Self.open())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await store.bind(.init(pushToken: "A", webhookID: "w1"), now: now) == [])
        #expect(try await store.bind(.init(pushToken: "A", webhookID: "w1"), now: now) == [], "binding the same pair again changes nothing")
        #expect(try await store.bind(.init(pushToken: "B", webhookID: "w2"), now: now) == [])
        // A moves to B's webhook id: both A's old pair and B's pair are replaced.
        let replaced = try await store.bind(.init(pushToken: "A", webhookID: "w2"), now: now)
        #expect(Set(replaced) == [.init(pushToken: "A", webhookID: "w1"), .init(pushToken: "B", webhookID: "w2")])
        #expect(try await store.bindings() == [.init(pushToken: "A", webhookID: "w2")])
        #expect(try await store.binding(pushToken: "B") == nil)
        #expect(try await store.binding(webhookID: "w1") == nil)
        #expect(try await store.binding(webhookID: "w2")?.pushToken == "A")
    }

    @Test func upgradingSeedsTheLatestPairOfEachTokenAndWebhookFromTheLedger() async throws {
        let path = TestServer.tempPath()
        let db = try PushRelayDatabase(path: path)
        let all = PushRelayDatabase.migrations.sorted { $0.version < $1.version }
        _ = try db.migrate(all.filter { $0.version < 8 })
        try await db.pool.write { db in
            for (day, token, webhook, at) in [
                ("2026-11-20", "old-token", "hook-1", "2026-11-20T10:00:00.000Z"),
                ("2026-11-21", "new-token", "hook-1", "2026-11-21T10:00:00.000Z"),  // token refresh: hook-1 is new-token's
                ("2026-11-21", "moving", "hook-a", "2026-11-21T09:00:00.000Z"),
                ("2026-11-22", "moving", "hook-b", "2026-11-22T09:00:00.000Z"),   // re-registration: moving is hook-b's
            ] {
                try db.execute(sql: "INSERT INTO daily_usage (day, push_token, webhook_id, updated_at) VALUES (?, ?, ?, ?)",
                               arguments: [day, token, webhook, at])
            }
        }
        _ = try db.migrate(all)
        let bindings = try await ChannelStore(database: db).bindings()
        #expect(Set(bindings) == [.init(pushToken: "new-token", webhookID: "hook-1"), .init(pushToken: "moving", webhookID: "hook-b")])
    }
}
