import Foundation
import GRDB
import PushRelayCore
import PushRelayEventLoopClock
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// The SQLite engine's own file: its schema and migrations, synced writes, pruning, the WAL checkpoint and plain SQL.
///
/// ThreadSanitizer: the writer's group commit and the background checkpoint, beside concurrent reads and writes.
@Suite struct PushRelayDatabaseTests {
    func openStore(_ path: String = TempPath.make()) throws -> SQLiteFixture {
        try SQLiteFixture(path)
    }

    @Test func migrationFilesAreTheEmbeddedSchema() throws {
        let dir = RepositoryRoot.url.appendingPathComponent("migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.count == PushRelayDatabase.migrations.count, "the build embeds migrations/ (EmbedPlugin)")
        for (file, m) in zip(files, PushRelayDatabase.migrations.sorted { $0.version < $1.version }) {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            #expect(file == m.name + ".sql")
            #expect(
                text.trimmingCharacters(in: .whitespacesAndNewlines) == m.sql.trimmingCharacters(in: .whitespacesAndNewlines),
                "migrations/\(file) differs from the embedded copy (EmbedPlugin)"
            )
        }
    }

    @Test func everyAnsweredWriteWasSyncedToDisk() async throws {
        let path = TempPath.make()
        let db = try PushRelayDatabase(path: path)
        defer { try? db.close() }
        try db.migrate()
        // WAL, and the writer's commits do not sync (NORMAL): the group commit syncs the WAL itself, off the writer.
        let (mode, sync) = try await db.pool.writeWithoutTransaction { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(mode == "wal")
        #expect(sync == 1)
        let store = SQLiteFixture(database: db)
        let day = UTCDay(Date())
        var seen = db.walSyncs
        for i in 0..<10 {
            _ = try await store.quota.reserve(pushToken: "sync-\(i)", appID: nil, day: day, policy: QuotaPolicy(), now: Date())
            // Answered only after a sync that followed the commit: the count moved on for every write.
            #expect(db.walSyncs > seen, "write \(i) was answered before a WAL sync")
            seen = db.walSyncs
        }
        // A transaction that only reads waits for no sync.
        try await store.deliveries.flush()
        _ = try await store.quota.rateLimits(pushToken: "sync-0", appID: nil, day: day, policy: QuotaPolicy())
        #expect(db.walSyncs == seen)
        // Concurrent writes share commits and syncs.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    _ = try await store.quota.reserve(pushToken: "burst-\(i % 20)", appID: nil, day: day, policy: QuotaPolicy(), now: Date())
                }
            }
            try await group.waitForAll()
        }
        #expect(db.walSyncs - seen < 200)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func migrateIsIdempotentAndRecorded() throws {
        let path = TempPath.make()
        let db = try PushRelayDatabase(path: path)
        let all = PushRelayDatabase.migrations.sorted { $0.version < $1.version }
        #expect(all.first?.name == "001_initial")
        #expect(try db.migrate() == all.map(\.name))
        #expect(try db.migrate() == [])
        #expect(try db.appliedMigrations().map(\.version) == all.map(\.version))
        try db.close()
        // A schema newer than this build is refused with a clear message.
        let again = try PushRelayDatabase(path: path)
        #expect(throws: StorageError.self) { try again.migrate([Migration(version: 0, name: "000_old", sql: "")]) }
        try again.close()
    }

    @Test func aFailedDeliveryTurnsItsReservationIntoAnError() async throws {
        let store = try openStore()
        let day = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy(dailyLimit: 1)
        let r = try await store.quota.reserve(pushToken: "x", appID: "a", day: day, policy: policy, now: day.start)
        #expect(r.decision.allowed)
        let record = DeliveryRecord(
            at: day.start,
            pushToken: "x",
            appID: "a",
            platform: .homeAssistant(.android),
            provider: "p",
            kind: .notification,
            counted: true,
            outcome: .transient,
            errorMessage: "upstream down"
        )
        let after = try await store.quota.complete(r, record: record)
        #expect(after == UsageCounters(attempts: 1, successful: 0, errors: 1))
        // The slot is free again: errors never use quota.
        #expect(try await store.quota.reserve(pushToken: "x", appID: "a", day: day, policy: policy, now: day.start).decision.allowed)
    }

    @Test func adminOperations() async throws {
        let store = try openStore()
        let day = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy(dailyLimit: 10)
        for _ in 0..<3 { _ = try await store.quota.reserve(pushToken: "busy", appID: nil, day: day, policy: policy, now: day.start) }
        _ = try await store.quota.reserve(pushToken: "quiet", appID: nil, day: day, policy: policy, now: day.start)
        #expect(try await store.admin.list(day: day, top: 1).map(\.pushToken) == ["busy"])
        try await store.admin.setLimit(pushToken: "busy", limit: 2)
        #expect(try await store.admin.history(pushToken: "busy").limitOverride == 2)
        #expect(try await store.quota.rateLimits(pushToken: "busy", appID: nil, day: day, policy: policy).maximum == 2)
        #expect(try await store.admin.clearLimit(pushToken: "busy"))
        #expect(try await store.admin.clearLimit(pushToken: "busy") == false)
        #expect(try await store.admin.reset(pushToken: "busy", day: day))
        #expect(try await store.quota.rateLimits(pushToken: "busy", appID: nil, day: day, policy: policy).attempts == 0)
    }

    @Test func loggedTextComesBackByteForByte() async throws {
        // The writer binds text as UTF-8 with its length: empty, short (Swift's inline strings), non-ASCII and long
        // values all read back as they were.
        let store = try openStore()
        let day = UTCDay(string: "2026-11-21")!
        let long = String(repeating: "Porte ouverte à 7 h 😀 ", count: 200)
        let values = ["", "t", "tok:en-é", long]
        for (i, v) in values.enumerated() {
            try await store.deliveries.log(
                DeliveryRecord(
                    at: day.start,
                    pushToken: "text-\(i)",
                    appID: v,
                    platform: nil,
                    provider: "p",
                    kind: .notification,
                    counted: false,
                    outcome: .delivered,
                    messageID: v,
                    errorMessage: nil,
                    payload: v
                )
            )
        }
        for (i, v) in values.enumerated() {
            let row = try #require(try await store.deliveries.recentDeliveries(pushToken: "text-\(i)").first)
            #expect(row.appID == v)
            #expect(row.messageID == v)
            #expect(row.payload == v)
            #expect(row.errorMessage == nil)
        }
    }

    @Test func pruneDropsDaysPastRetention() async throws {
        let store = try openStore()
        let today = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy()
        for back in [0, 29, 30, 31, 90] {
            let day = today.adding(days: -Int64(back))
            _ = try await store.quota.reserve(pushToken: "t", appID: nil, day: day, policy: policy, now: day.start)
            try await store.deliveries.log(
                DeliveryRecord(
                    at: day.start,
                    pushToken: "t",
                    appID: nil,
                    platform: nil,
                    provider: "p",
                    kind: .notification,
                    counted: false,
                    outcome: .delivered
                )
            )
        }
        let removed = try await store.admin.prune(today: today, retentionDays: 30, pace: PrunePace(clock: EventLoopClock()))
        #expect(removed == 4)
        #expect(try await store.admin.history(pushToken: "t").rows.map(\.day) == ["2026-11-21", "2026-10-23", "2026-10-22"])
    }

    @Test func aTokensDaysAreFoundWithoutAnIndexOnTheToken() async throws {
        // Migration 006 dropped the push_token index; cross-day reads walk the days through the primary key.
        let store = try openStore()
        let today = UTCDay(string: "2026-11-21")!
        let policy = QuotaPolicy(dailyLimit: 500, appLimits: [("io.small", 7)])
        for back in [0, 1, 3, 6] {
            let day = today.adding(days: -Int64(back))
            for token in ["a", "b", "c"] where !(token == "b" && back == 0) {
                // Token "b" posted with its app id only on older days: the newest one wins.
                let app = token == "b" ? (back == 1 ? "io.small" : "io.big") : nil
                _ = try await store.quota.reserve(pushToken: token, appID: app, day: day, policy: policy, now: day.start)
            }
        }
        #expect(try await store.admin.history(pushToken: "b").rows.map(\.day) == ["2026-11-20", "2026-11-18", "2026-11-15"])
        #expect(try await store.admin.history(pushToken: "a", days: 2).rows.map(\.day) == ["2026-11-21", "2026-11-20"])
        #expect(try await store.admin.history(pushToken: "nobody").rows.isEmpty)
        // checkRateLimits carries no app id: the limit comes from the app the token last posted with.
        let limits = try await store.quota.rateLimits(pushToken: "b", appID: nil, day: today, policy: policy)
        #expect(limits.maximum == 7)
        #expect(try await store.quota.rateLimits(pushToken: "a", appID: nil, day: today, policy: policy).maximum == 500)
    }

    @Test func writesAfterCloseFailInsteadOfHanging() async throws {
        let path = TempPath.make()
        let store = try openStore(path)
        let day = UTCDay(string: "2026-11-21")!
        _ = try await store.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        try await store.database.flushAndClose()
        await #expect(throws: StorageError.closed) {
            _ = try await store.quota.reserve(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(), now: day.start)
        }
        // What was written before the close is on disk.
        let reopened = try openStore(path)
        #expect(try await reopened.admin.history(pushToken: "t").rows.map(\.successful) == [1])
    }

    @Test func theWALIsCheckpointedInTheBackground() async throws {
        // SQLite's own checkpoint only starts at ~40 MB of WAL; the checkpoint thread copies pages into the main file
        // within a fraction of a second of a commit.
        let path = TempPath.make()
        let store = try openStore(path)
        func mainFileSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
        let before = mainFileSize()
        let day = UTCDay(string: "2026-11-21")!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<2000 {
                group.addTask {
                    _ = try await store.quota.reserve(
                        pushToken: "token-\(i)-" + String(repeating: "x", count: 100),
                        appID: nil,
                        day: day,
                        policy: QuotaPolicy(),
                        now: day.start
                    )
                }
            }
            try await group.waitForAll()
        }
        try await eventually("the main file grows past \(before + 100_000) bytes") { mainFileSize() > before + 100_000 }
    }

    @Test func pruneFindsTheLogsDayBoundaryWithoutAnIndex() async throws {
        let store = try openStore()
        defer { try? store.database.close() }
        let today = UTCDay(string: "2026-11-21")!
        // Logged in time order, as the server does: 40 days, 3 rows a day.
        for back in stride(from: 39, through: 0, by: -1) {
            let day = today.adding(days: -Int64(back))
            for _ in 0..<3 {
                try await store.deliveries.log(
                    DeliveryRecord(
                        at: day.start,
                        pushToken: "t",
                        appID: nil,
                        platform: nil,
                        provider: "p",
                        kind: .notification,
                        counted: false,
                        outcome: .delivered
                    )
                )
            }
        }
        // A straggler: a delivery of an old day logged after the kept days began.
        let old = today.adding(days: -35)
        try await store.deliveries.log(
            DeliveryRecord(
                at: old.start,
                pushToken: "late",
                appID: nil,
                platform: nil,
                provider: "p",
                kind: .notification,
                counted: false,
                outcome: .delivered
            )
        )
        #expect(try await store.admin.prune(today: today, retentionDays: 30, pace: PrunePace(clock: EventLoopClock())) == 9 * 3 + 1)
        let days = try await store.database.pool.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT day FROM delivery_log ORDER BY day") }
        #expect(days.first == "2026-10-22" && days.last == "2026-11-21" && days.count == 31)
    }

    @Test func tablesAreReadableWithPlainSQL() async throws {
        let path = TempPath.make()
        let store = try openStore(path)
        _ = try await store.quota.reserve(pushToken: "tok", appID: "io.x", day: UTCDay(string: "2026-11-21")!, policy: QuotaPolicy(), now: Date())
        try await store.admin.setLimit(pushToken: "tok", limit: 9)
        let rows = try await store.database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT day || '|' || push_token || '|' || successful || '|' || limit_override FROM usage_with_limits")
        }
        #expect(rows == ["2026-11-21|tok|1|9"])
    }
}
