import Foundation
import PushRelayCore
import PushRelayStore
import GRDB
import Testing

@Suite struct StoreTests {
    func openStore(_ path: String = TestServer.tempPath()) throws -> QuotaStore {
        let db = try PushRelayDatabase(path: path)
        try db.migrate()
        return QuotaStore(database: db)
    }

    @Test func migrationFilesAreTheEmbeddedSchema() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.count == PushRelayDatabase.migrations.count, "run scripts/embed-migrations.sh")
        for (file, m) in zip(files, PushRelayDatabase.migrations.sorted { $0.version < $1.version }) {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            #expect(file == m.name + ".sql")
            #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == m.sql.trimmingCharacters(in: .whitespacesAndNewlines),
                    "migrations/\(file) differs from the embedded copy: run scripts/embed-migrations.sh")
        }
    }

    @Test func migrateIsIdempotentAndRecorded() throws {
        let path = TestServer.tempPath()
        let db = try PushRelayDatabase(path: path)
        #expect(try db.migrate() == PushRelayDatabase.migrations.sorted { $0.version < $1.version }.map(\.name))
        #expect(try db.migrate() == [])
        #expect(try db.appliedMigrations().map(\.version) == PushRelayDatabase.migrations.map(\.version).sorted())
        try db.close()
        // A schema newer than this build is refused with a clear message.
        let again = try PushRelayDatabase(path: path)
        #expect(throws: StoreError.self) { try again.migrate([Migration(version: 0, name: "000_old", sql: "")]) }
        try again.close()
    }

    @Test func aFailedDeliveryTurnsItsReservationIntoAnError() async throws {
        let store = try openStore()
        let day = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy(dailyLimit: 1)
        let r = try await store.reserve(pushToken: "x", appID: "a", day: day, policy: policy, now: day.start)
        #expect(r.decision.allowed)
        let record = DeliveryRecord(at: day.start, pushToken: "x", appID: "a", platform: "android", provider: "p", kind: "notification",
                                    counted: true, outcome: "transient", errorMessage: "upstream down")
        let after = try await store.complete(r, record: record)
        #expect(after == UsageCounters(attempts: 1, successful: 0, errors: 1))
        // The slot is free again: errors never use quota.
        #expect(try await store.reserve(pushToken: "x", appID: "a", day: day, policy: policy, now: day.start).decision.allowed)
    }

    @Test func adminOperations() async throws {
        let store = try openStore()
        let day = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy(dailyLimit: 10)
        for _ in 0..<3 { _ = try await store.reserve(pushToken: "busy", appID: nil, day: day, policy: policy, now: day.start) }
        _ = try await store.reserve(pushToken: "quiet", appID: nil, day: day, policy: policy, now: day.start)
        #expect(try await store.list(day: day, top: 1).map(\.pushToken) == ["busy"])
        try await store.setLimit(pushToken: "busy", limit: 2)
        #expect(try await store.history(pushToken: "busy").limitOverride == 2)
        #expect(try await store.rateLimits(pushToken: "busy", appID: nil, day: day, policy: policy).maximum == 2)
        #expect(try await store.clearLimit(pushToken: "busy"))
        #expect(try await store.clearLimit(pushToken: "busy") == false)
        #expect(try await store.reset(pushToken: "busy", day: day))
        #expect(try await store.rateLimits(pushToken: "busy", appID: nil, day: day, policy: policy).attempts == 0)
    }

    @Test func pruneDropsDaysPastRetention() async throws {
        let store = try openStore()
        let today = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy()
        for back in [0, 29, 30, 31, 90] {
            let day = today.adding(days: -Int64(back))
            _ = try await store.reserve(pushToken: "t", appID: nil, day: day, policy: policy, now: day.start)
            try await store.log(DeliveryRecord(at: day.start, pushToken: "t", appID: nil, platform: nil, provider: "p",
                                               kind: "notification", counted: false, outcome: "delivered"))
        }
        let removed = try await store.prune(today: today, retentionDays: 30)
        #expect(removed == 4)
        #expect(try await store.history(pushToken: "t").rows.map(\.day) == ["2026-11-21", "2026-10-23", "2026-10-22"])
    }

    @Test func tablesAreReadableWithPlainSQL() async throws {
        let path = TestServer.tempPath()
        let store = try openStore(path)
        _ = try await store.reserve(pushToken: "tok", appID: "io.x", day: UTCDay(string: "2026-11-21")!, policy: QuotaPolicy(), now: Date())
        try await store.setLimit(pushToken: "tok", limit: 9)
        let rows = try await store.database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT day || '|' || push_token || '|' || successful || '|' || limit_override FROM usage_with_limits")
        }
        #expect(rows == ["2026-11-21|tok|1|9"])
    }
}
