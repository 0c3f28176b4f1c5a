import Foundation
import GRDB
import PushRelayCore
import PushRelayEventLoopClock
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// Pruning a large database while requests reserve quota: in bounded steps, every expired row gone, every
/// reservation answered and counted exactly once, and the WAL cut back to its limit afterwards.
/// (`Benchmarks/soak.sh` measures the same at the scale of millions of rows, with its latency.)
///
/// ThreadSanitizer, with cores to spare: its writers wait at most SQLite's 10 s busy timeout beside a 200,000-row
/// prune, which ThreadSanitizer's slowdown on two shared cores outlasts without any race, so CI leaves it out.
@Suite struct PruneUnderLoadTests {
    let today = UTCDay(string: "2026-11-21")!

    @Test func aLargePruneRunsInStepsBesideReservations() async throws {
        let path = TempPath.make()
        let store = try SQLiteFixture(path)
        defer { try? store.database.close() }
        let old = today.adding(days: -3).description
        let expiredLog = 200_000
        let expiredUsage = 50_000
        // Expired rows as a long-running instance holds them: usage rows and FCM-style log rows (no payload).
        try await store.database.pool.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                    INSERT INTO delivery_log (at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id)
                    SELECT ?2 || 'T12:00:00Z', ?2, 'old-' || (i % ?3), 'app', 'android', 'fcm', 'notification', 1, 'delivered',
                           'projects/p/messages/' || i
                    FROM n
                    """,
                arguments: [expiredLog, old, expiredUsage]
            )
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
                    INSERT INTO daily_usage (day, push_token, app_id, attempts, successful, updated_at)
                    SELECT ?2, 'old-' || i, 'app', 4, 4, ?2 || 'T12:00:00Z' FROM n
                    """,
                arguments: [expiredUsage, old]
            )
        }

        let pace = PrunePace(rowsPerStep: 2_000, pause: .milliseconds(1), clock: EventLoopClock())
        let policy = QuotaPolicy(dailyLimit: 1_000)
        let tokens = 40
        let perToken = 25
        let steps = Locked<[Int]>([])
        async let pruned = store.admin.prune(today: today, retentionDays: 1, pace: pace) { n in steps.withLock { $0.append(n) } }
        // Requests reserve today's quota the whole time.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tokens {
                group.addTask {
                    for _ in 0..<perToken {
                        let r = try await store.reserve("new-\(t)", day: today, policy: policy)
                        #expect(r.decision.allowed)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await pruned == expiredLog + expiredUsage)
        let taken = steps.withLock { $0 }
        #expect(taken.count >= (expiredLog + expiredUsage) / pace.rowsPerStep)
        #expect(taken.allSatisfy { $0 <= pace.rowsPerStep })

        let (logLeft, usageOld, usageNew, counted) = try await store.database.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM delivery_log") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage WHERE day = ?", arguments: [old]) ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage WHERE day = ?", arguments: [today.description]) ?? -1,
                try Int.fetchOne(db, sql: "SELECT sum(successful) FROM daily_usage WHERE day = ?", arguments: [today.description]) ?? -1
            )
        }
        #expect(logLeft == 0 && usageOld == 0)
        #expect(usageNew == tokens && counted == tokens * perToken)

        // Once a checkpoint lets the WAL start over, the next commit cuts the file back to the limit.
        _ = try await store.database.pool.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        _ = try await store.reserve("after", day: today, policy: policy)
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(wal <= PushRelayDatabase.walSizeLimitBytes)
    }
}
