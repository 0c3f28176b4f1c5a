import Foundation
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayStore
import Testing

/// What any engine's `QuotaAdministration` and `DeliveryLog` must do for admins.
@Suite struct QuotaAdministrationContractTests {
    let day = UTCDay(string: "2026-11-21")!

    @Test(arguments: StorageEngineUnderTest.all)
    func overridesResetsAndListsAreSeenAtOnce(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let policy = QuotaPolicy(dailyLimit: 10)
        for _ in 0..<3 { _ = try await storage.quota.reserve(pushToken: "busy", appID: nil, day: day, policy: policy, now: day.start) }
        _ = try await storage.quota.reserve(pushToken: "quiet", appID: nil, day: day, policy: policy, now: day.start)
        #expect(try await storage.admin.list(day: day, top: nil).map(\.pushToken) == ["busy", "quiet"])
        #expect(try await storage.admin.list(day: day, top: 1).map(\.pushToken) == ["busy"])
        try await storage.admin.setLimit(pushToken: "busy", limit: 3)
        #expect(try await storage.admin.history(pushToken: "busy").limitOverride == 3)
        #expect(try await storage.quota.reserve(pushToken: "busy", appID: nil, day: day, policy: policy, now: day.start).decision.allowed == false)
        #expect(try await storage.admin.clearLimit(pushToken: "busy"))
        #expect(try await storage.admin.clearLimit(pushToken: "busy") == false)
        #expect(try await storage.admin.reset(pushToken: "busy", day: day))
        #expect(try await storage.quota.rateLimits(pushToken: "busy", appID: nil, day: day, policy: policy).attempts == 0)
        #expect(try await storage.quota.reserve(pushToken: "busy", appID: nil, day: day, policy: policy, now: day.start).decision.allowed)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func pruneKeepsTheRetentionWindow(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        for back in [0, 29, 30, 31, 90] {
            let d = day.adding(days: -Int64(back))
            _ = try await storage.quota.reserve(pushToken: "t", appID: nil, day: d, policy: QuotaPolicy(), now: d.start)
        }
        #expect(try await storage.admin.prune(today: day, retentionDays: 30, pace: PrunePace(clock: EventLoopClock())) >= 2)
        #expect(try await storage.admin.history(pushToken: "t").rows.map(\.day) == ["2026-11-21", "2026-10-23", "2026-10-22"])
        await close()
    }

    /// Pruning deletes in bounded steps: no step deletes more than its limit, the steps together delete every expired
    /// usage row, log row and dead token, and nothing of the retention window.
    @Test(arguments: StorageEngineUnderTest.all)
    func pruneDeletesInBoundedStepsUntilNothingExpiredIsLeft(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let old = day.adding(days: -5)
        let policy = QuotaPolicy(dailyLimit: 1_000)
        for i in 0..<120 {
            _ = try await storage.quota.reserve(pushToken: "old-\(i)", appID: nil, day: old, policy: policy, now: old.start)
            storage.quota.recordDelivered(Self.record("old-\(i)", at: old.start), day: old) { _ in }
        }
        try await storage.deliveries.flush()
        for i in 0..<30 {
            try await storage.deliveries.markDead(
                "dead-\(i)",
                DeadMark(provider: "p", reason: "Unregistered", message: nil, until: old.start.addingTimeInterval(60)),
                now: old.start
            )
        }
        _ = try await storage.quota.reserve(pushToken: "kept", appID: nil, day: day, policy: policy, now: day.start)
        try await storage.deliveries.log(Self.record("kept", at: day.start))
        // A row logged late: an old day's delivery that finished after a kept row was logged.
        try await storage.deliveries.log(Self.record("late", at: old.start))

        #expect(try await storage.admin.pruneStep(today: day, retentionDays: 2, limit: 50) == 50)
        var steps: [Int] = []
        let rest = try await storage.admin.prune(
            today: day,
            retentionDays: 2,
            pace: PrunePace(rowsPerStep: 40, pause: .zero, clock: EventLoopClock())
        ) {
            steps.append($0)
        }
        #expect(50 + rest == 120 + 120 + 30 + 1)
        #expect(steps.allSatisfy { $0 <= 40 } && steps.count >= 5)
        #expect(try await storage.admin.pruneStep(today: day, retentionDays: 2, limit: 50) == 0)
        #expect(try await storage.admin.list(day: old, top: nil).isEmpty)
        #expect(try await storage.admin.list(day: day, top: nil).map(\.pushToken) == ["kept"])
        #expect(try await storage.deliveries.recentDeliveries(pushToken: nil, limit: 10).map(\.pushToken) == ["kept"])
        await close()
    }

    /// A restored or merged database: more newer log rows at low ids than one statement of the walk reads, then expired
    /// rows, then newer ones again. Pruning deletes every expired row, wherever it sits, and keeps every newer one.
    @Test(arguments: StorageEngineUnderTest.all)
    func pruneDeletesExpiredLogRowsBehindNewerOnes(engine: StorageEngineUnderTest) async throws {
        let (storage, execute, close) = try await engine.openWithPlainSQL()
        let old = day.adding(days: -5).description
        let new = day.description
        let ranges = [(1, 5, old), (6, PruneLogWalk.window + 1_055, new), (20_001, 20_300, old), (30_001, 30_010, new), (30_011, 30_012, old)]
        for (first, last, d) in ranges {
            let token = d == old ? "expired" : "kept"
            let columns = "INSERT INTO delivery_log (id, at, day, push_token, provider, kind, counted, outcome)"
            let values = "'\(d)T00:00:00Z', '\(d)', '\(token)', 'p', 'notification', 1, 'delivered'"
            switch engine {
            case .sqlite:
                try await execute(
                    "WITH RECURSIVE n(i) AS (SELECT \(first) UNION ALL SELECT i + 1 FROM n WHERE i < \(last)) \(columns) SELECT i, \(values) FROM n"
                )
            case .postgres:
                try await execute("\(columns) SELECT i, \(values) FROM generate_series(\(first), \(last)) i")
            }
        }
        let expired = 5 + 300 + 2
        let kept = PruneLogWalk.window + 1_050 + 10
        var steps: [Int] = []
        let pruned = try await storage.admin.prune(
            today: day,
            retentionDays: 2,
            pace: PrunePace(rowsPerStep: 100, pause: .zero, clock: EventLoopClock())
        ) { steps.append($0) }
        #expect(pruned == expired)
        #expect(steps.allSatisfy { $0 <= 100 })
        #expect(try await storage.deliveries.recentDeliveries(pushToken: "expired", limit: 1_000).isEmpty)
        #expect(try await storage.deliveries.recentDeliveries(pushToken: "kept", limit: kept + 1).count == kept)
        #expect(try await storage.admin.pruneStep(today: day, retentionDays: 2, limit: 100) == 0)
        await close()
    }

    private static func record(_ token: String, at: Date) -> DeliveryRecord {
        DeliveryRecord(
            at: at,
            pushToken: token,
            appID: nil,
            platform: nil,
            provider: "p",
            kind: .notification,
            counted: true,
            outcome: .delivered
        )
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func deadTokensAreRememberedAndForgotten(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let mark = DeadMark(provider: "apns", reason: "BadDeviceToken", message: nil, until: day.start.addingTimeInterval(60))
        try await storage.deliveries.markDead("x", mark, now: day.start)
        #expect(try await storage.deliveries.deadToken("x", now: day.start)?.provider == "apns")
        #expect(try await storage.deliveries.forgetDead("x"))
        #expect(try await storage.deliveries.forgetDead("x") == false)
        #expect(try await storage.deliveries.deadToken("x", now: day.start) == nil)
        try await storage.deliveries.log(
            DeliveryRecord(
                at: day.start,
                pushToken: "x",
                appID: nil,
                platform: nil,
                provider: "p",
                kind: .rateLimitNotice,
                counted: false,
                outcome: .delivered,
                payload: "{\"a\":1}"
            )
        )
        let row = try #require(try await storage.deliveries.recentDeliveries(pushToken: "x").first)
        #expect(row.kind == .rateLimitNotice && row.payload == "{\"a\":1}" && !row.counted)
        await close()
    }
}
