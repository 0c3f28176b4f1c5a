import Foundation
import GRDB
import PushRelayCore
import PushRelayTestHarness
import Testing

@testable import PushRelaySQLite
@testable import PushRelayStore

/// The writer connection's cache of quota rows (`SQLiteUsageCache`). It only saves reads: every reservation updates
/// `daily_usage` in place, and the cache must follow every other writer: another process, a rolled-back batch,
/// midnight, overrides and dead marks. An older build's pending rows are folded by migration 009.
@Suite struct SQLiteUsageCacheTests {
    let day = UTCDay(string: "2026-11-21")!

    @discardableResult
    func deliver(_ f: SQLiteFixture, _ token: String, day: UTCDay? = nil, limit: Int = 500) async throws -> QuotaDecision {
        try await f.reserve(token, appID: "io.app", day: day ?? self.day, policy: QuotaPolicy(dailyLimit: limit), webhookID: "hook").decision
    }

    /// The token's `successful` as the table holds it, read with plain SQL.
    func raw(_ f: SQLiteFixture, _ token: String, day: UTCDay? = nil) async throws -> Int? {
        try await f.database.pool.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT successful FROM daily_usage WHERE day = ? AND push_token = ?",
                arguments: [(day ?? self.day).description, token]
            )
        }
    }

    @Test func everyReservationIsInTheTableAtOnce() async throws {
        let f = try SQLiteFixture()
        defer { try? f.database.close() }
        for i in 1...10 {
            try await deliver(f, "t")
            #expect(try await raw(f, "t") == i)
        }
        #expect(try await f.admin.list(day: day, top: nil).map(\.successful) == [10])
        let plain = try await f.database.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT successful FROM usage_with_limits WHERE push_token = 't'")
        }
        #expect(plain == 10)
    }

    @Test func aCrashImageHoldsEveryAnsweredReservation() async throws {
        let path = TempPath.make()
        let f = try SQLiteFixture(path)
        for i in 0..<40 { try await deliver(f, "tok-\(i % 4)") }
        // What the disk holds now is what a crash would leave: the database and its WAL (the -shm is rebuilt).
        let copy = TempPath.make()
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        try f.database.close()
        let reopened = try SQLiteFixture(copy)
        defer { try? reopened.database.close() }
        for i in 0..<4 { #expect(try await raw(reopened, "tok-\(i)") == 10) }
        try await deliver(reopened, "tok-0")
        #expect(try await raw(reopened, "tok-0") == 11)
    }

    @Test func anotherProcessesChangeIsSeen() async throws {
        let path = TempPath.make()
        let server = try SQLiteFixture(path)
        defer { try? server.database.close() }
        for _ in 0..<5 { try await deliver(server, "t") }
        // The CLI, on its own connection.
        let cli = try SQLiteFixture(path)
        #expect(try await cli.admin.history(pushToken: "t").rows.map(\.successful) == [5])
        #expect(try await cli.admin.reset(pushToken: "t", day: day))
        try await cli.admin.setLimit(pushToken: "t", limit: 2)
        try cli.database.close()
        // The server notices (PRAGMA data_version), forgets what it had cached and counts from the new state.
        #expect(try await deliver(server, "t").allowed)
        #expect(try await deliver(server, "t").allowed)
        #expect(try await deliver(server, "t").allowed == false)
        let limits = try await server.quota.rateLimits(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy())
        #expect(limits.attempts == 3 && limits.successful == 2 && limits.maximum == 2)
    }

    @Test func midnightStartsANewRow() async throws {
        let f = try SQLiteFixture()
        defer { try? f.database.close() }
        for _ in 0..<3 { try await deliver(f, "t") }
        let next = day.adding(days: 1)
        try await deliver(f, "t", day: next)
        #expect(try await raw(f, "t") == 3)
        #expect(try await raw(f, "t", day: next) == 1)
    }

    @Test func aRolledBackBatchDoesNotCountTwice() async throws {
        struct Boom: Error {}
        let f = try SQLiteFixture()
        defer { try? f.database.close() }
        try await deliver(f, "t")
        // Failing writes in the same batches as reservations: each batch rolls back and its jobs run again one by one.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                if i % 20 == 0 {
                    group.addTask { _ = try? await f.database.batcher.write { _ -> Void in throw Boom() } }
                } else {
                    group.addTask { try await self.deliver(f, "t") }
                }
            }
            try await group.waitForAll()
        }
        let expected = 1 + 190
        #expect(try await raw(f, "t") == expected)
        #expect(try await f.quota.rateLimits(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy()).successful == expected)
    }

    @Test func overridesAndDeadMarksReachTheCachedToken() async throws {
        let f = try SQLiteFixture()
        defer { try? f.database.close() }
        for _ in 0..<3 { try await deliver(f, "t") }
        try await f.admin.setLimit(pushToken: "t", limit: 3)
        #expect(try await deliver(f, "t").allowed == false)
        _ = try await f.admin.clearLimit(pushToken: "t")
        #expect(try await deliver(f, "t").allowed)
        try await f.deliveries.markDead(
            "t",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: nil, until: day.start.addingTimeInterval(3600)),
            now: day.start
        )
        let result = try await f.quota.reserveUnlessDead(
            pushToken: "t",
            appID: "io.app",
            webhookID: nil,
            day: day,
            policy: QuotaPolicy(),
            now: day.start,
            checkDead: true
        )
        guard case .dead = result else {
            Issue.record("expected dead, got \(result)")
            return
        }
        #expect(try await f.deliveries.forgetDead("t"))
        #expect(try await deliver(f, "t").allowed)
        #expect(try await raw(f, "t") == 5)
    }

    /// A database written by a build with the write-behind (migration 007) may hold deliveries counted only by their
    /// log row; migration 009 folds them into `daily_usage` before dropping the write-behind.
    @Test func upgradingFoldsWhatAnOlderBuildLeftPending() async throws {
        let f = try SQLiteFixture(migrate: false)
        defer { try? f.database.close() }
        let all = PushRelayDatabase.migrations.sorted { $0.version < $1.version }
        _ = try f.database.migrate(all.filter { $0.version < 9 })
        try await f.database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO daily_usage (day, push_token, attempts, successful, errors, updated_at) VALUES ('2026-11-21', 't', 1, 1, 0, 'x');
                    """
            )
            for i in 0..<4 {
                try db.execute(
                    sql: """
                        INSERT INTO delivery_log (at, day, push_token, provider, kind, counted, outcome, pending_usage)
                        VALUES (?, '2026-11-21', 't', 'sandbox', 'notification', 1, 'delivered', 1)
                        """,
                    arguments: ["2026-11-21T10:00:0\(i).000Z"]
                )
            }
        }
        _ = try f.database.migrate(all)
        #expect(try await raw(f, "t") == 5)
        let rows = try await f.admin.list(day: day, top: nil)
        #expect(rows.map(\.attempts) == [5])
        let gone = try await f.database.pool.read { db in try db.tableExists("usage_fold") }
        #expect(!gone)
    }
}
