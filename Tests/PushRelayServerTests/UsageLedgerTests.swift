import Foundation
import GRDB
import PushRelayCore
@testable import PushRelayStore
import Testing

/// The write-behind of `daily_usage` (UsageLedger, migrations/007_usage_journal.sql): a sandbox delivery is counted by
/// its log row and folded into its token's row later. Counts must be exact at every moment, through every reader, across
/// a crash, another process's change, a rolled-back batch and midnight.
@Suite struct UsageLedgerTests {
    let day = UTCDay(string: "2026-11-21")!

    func open(_ path: String = TestServer.tempPath()) throws -> QuotaStore {
        let db = try PushRelayDatabase(path: path)
        try db.migrate()
        return QuotaStore(database: db)
    }

    /// A sandbox delivery: reserve and log in one transaction, as the Home Assistant endpoints do.
    @discardableResult
    func deliver(_ store: QuotaStore, _ token: String, day: UTCDay? = nil, limit: Int = 500) async throws -> QuotaDecision {
        let day = day ?? self.day
        let record = DeliveryRecord(at: day.start, pushToken: token, appID: "io.app", platform: "android", provider: "sandbox",
                                    kind: "notification", counted: true, outcome: "delivered", messageID: "m", payload: "{}")
        let result = try await store.reserveUnlessDead(pushToken: token, appID: "io.app", webhookID: "hook", day: day,
                                                       policy: QuotaPolicy(dailyLimit: limit), now: day.start, delivered: record)
        guard case .reserved(let r) = result else { Issue.record("not reserved"); throw CancellationError() }
        return r.decision
    }

    /// (raw daily_usage.successful, daily_usage_current.successful, log rows still pending) for a token.
    func counts(_ store: QuotaStore, _ token: String, day: UTCDay? = nil) async throws -> (raw: Int?, current: Int?, pending: Int) {
        let day = (day ?? self.day).description
        try await store.flush()
        return try await store.database.pool.read { db in
            let raw = try Int.fetchOne(db, sql: "SELECT successful FROM daily_usage WHERE day = ? AND push_token = ?", arguments: [day, token])
            let current = try Int.fetchOne(db, sql: "SELECT successful FROM usage_with_limits WHERE day = ? AND push_token = ?", arguments: [day, token])
            let pending = try Int.fetchOne(db, sql: "SELECT pending FROM daily_usage_current WHERE day = ? AND push_token = ?", arguments: [day, token]) ?? 0
            return (raw, current, pending)
        }
    }

    @Test func aDeliveryIsCountedByItsLogRowUntilTheFold() async throws {
        let store = try open()
        defer { try? store.database.close() }
        for _ in 0..<10 { try await deliver(store, "t") }
        // The day's first delivery inserted the row; the nine after it are counted by their log rows.
        var c = try await counts(store, "t")
        #expect(c.raw == 1 && c.current == 10 && c.pending == 9)
        // Every reader sees the exact count.
        #expect(try await store.rateLimits(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy()).successful == 10)
        #expect(try await store.list(day: day, top: nil).map(\.successful) == [10])
        #expect(try await store.history(pushToken: "t").rows.map(\.attempts) == [10])
        try await store.foldPending()
        c = try await counts(store, "t")
        #expect(c.raw == 10 && c.current == 10 && c.pending == 0)
        let (logged, through) = try await store.database.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT max(id) FROM delivery_log")!, try Int.fetchOne(db, sql: "SELECT folded_through FROM usage_fold")!)
        }
        #expect(logged == 10 && through == 10)
    }

    @Test func theLimitHoldsExactlyWithPendingCounts() async throws {
        let store = try open()
        defer { try? store.database.close() }
        var allowed = 0
        for _ in 0..<8 where try await deliver(store, "t", limit: 5).allowed { allowed += 1 }
        #expect(allowed == 5)
        // The first refusal updated the row in place, with everything pending in it.
        let c = try await counts(store, "t")
        #expect(c.raw == 5 && c.current == 5 && c.pending == 0)
        let limits = try await store.rateLimits(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy(dailyLimit: 5))
        #expect(limits.attempts == 8 && limits.successful == 5 && limits.remaining == 0)
    }

    @Test func concurrentDeliveriesAreFoldedInRoundsWhileServing() async throws {
        let store = try open()
        defer { try? store.database.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<3000 { group.addTask { try await self.deliver(store, "tok-\(i % 60)") } }
            try await group.waitForAll()
        }
        let (sumRaw, sumCurrent, through) = try await store.database.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT sum(successful) FROM daily_usage")!,
             try Int.fetchOne(db, sql: "SELECT sum(successful) FROM usage_with_limits")!,
             try Int.fetchOne(db, sql: "SELECT folded_through FROM usage_fold")!)
        }
        #expect(sumCurrent == 3000)
        // Rounds ran while serving: most counts are already in the rows.
        #expect(through > 0 && sumRaw > 60)
        try await store.foldPending()
        let rows = try await store.list(day: day, top: nil)
        #expect(rows.count == 60 && rows.allSatisfy { $0.successful == 50 && $0.attempts == 50 })
    }

    @Test func aCrashLosesNoCount() async throws {
        let path = TestServer.tempPath()
        let store = try open(path)
        for i in 0..<40 { try await deliver(store, "tok-\(i % 4)") }
        try await store.flush()
        // What the disk holds now is what a crash would leave: the database and its WAL (the -shm is rebuilt).
        let copy = TestServer.tempPath()
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        try store.database.close()
        let reopened = try open(copy)
        defer { try? reopened.database.close() }
        // Opening folded what was pending: the plain table is exact.
        for i in 0..<4 {
            let c = try await counts(reopened, "tok-\(i)")
            #expect(c.raw == 10 && c.current == 10 && c.pending == 0)
        }
        try await deliver(reopened, "tok-0")
        #expect(try await counts(reopened, "tok-0").current == 11)
    }

    @Test func anotherProcessesChangeIsSeen() async throws {
        let path = TestServer.tempPath()
        let server = try open(path)
        defer { try? server.database.close() }
        for _ in 0..<5 { try await deliver(server, "t") }
        // The CLI, on its own connection: it folds the server's pending rows before deleting the row.
        let cli = try open(path)
        #expect(try await cli.history(pushToken: "t").rows.map(\.successful) == [5])
        #expect(try await cli.reset(pushToken: "t", day: day))
        try await cli.setLimit(pushToken: "t", limit: 2)
        try cli.database.close()
        // The server notices (PRAGMA data_version), forgets what it had cached and counts from the new state.
        #expect(try await deliver(server, "t").allowed)
        #expect(try await deliver(server, "t").allowed)
        #expect(try await deliver(server, "t").allowed == false)
        let limits = try await server.rateLimits(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy())
        #expect(limits.attempts == 3 && limits.successful == 2 && limits.maximum == 2)
    }

    @Test func midnightFoldsTheDayBefore() async throws {
        let store = try open()
        defer { try? store.database.close() }
        for _ in 0..<3 { try await deliver(store, "t") }
        let next = day.adding(days: 1)
        try await deliver(store, "t", day: next)
        #expect(try await counts(store, "t").raw == 3)
        #expect(try await counts(store, "t", day: next).current == 1)
    }

    @Test func aRolledBackBatchDoesNotCountTwice() async throws {
        struct Boom: Error {}
        let store = try open()
        defer { try? store.database.close() }
        try await deliver(store, "t")
        // Failing writes in the same batches as deliveries: each batch rolls back and its jobs run again one by one.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                if i % 20 == 0 {
                    group.addTask { _ = try? await store.database.batcher.write { _ -> Void in throw Boom() } }
                } else {
                    group.addTask { try await self.deliver(store, "t") }
                }
            }
            try await group.waitForAll()
        }
        let expected = 1 + 190
        #expect(try await counts(store, "t").current == expected)
        #expect(try await store.rateLimits(pushToken: "t", appID: nil, day: day, policy: QuotaPolicy()).successful == expected)
        let logged = try await store.database.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM delivery_log")! }
        #expect(logged == expected)
        try await store.foldPending()
        #expect(try await counts(store, "t").raw == expected)
    }

    @Test func overridesAndDeadMarksReachTheCachedToken() async throws {
        let store = try open()
        defer { try? store.database.close() }
        for _ in 0..<3 { try await deliver(store, "t") }
        try await store.setLimit(pushToken: "t", limit: 3)
        #expect(try await deliver(store, "t").allowed == false)
        _ = try await store.clearLimit(pushToken: "t")
        #expect(try await deliver(store, "t").allowed)
        try await store.markDead("t", DeadMark(provider: "fcm", reason: "UNREGISTERED", message: nil, until: day.start.addingTimeInterval(3600)),
                                 now: day.start)
        let result = try await store.reserveUnlessDead(pushToken: "t", appID: "io.app", day: day, policy: QuotaPolicy(), now: day.start)
        guard case .dead = result else { Issue.record("expected dead, got \(result)"); return }
        #expect(try await store.forgetDead("t"))
        #expect(try await deliver(store, "t").allowed)
        #expect(try await counts(store, "t").current == 5)
    }
}
