import Foundation
import PushRelayCore
import PushRelayStore
import Testing

/// What any engine's `QuotaLedger` must do: decide exactly, under any concurrency, per token and UTC day.
///
/// ThreadSanitizer: one token's quota reserved from many tasks at once, and group commit, on both engines.
@Suite struct QuotaLedgerContractTests {
    let day = UTCDay(string: "2026-11-21")!

    @Test(arguments: StorageEngineUnderTest.all)
    func concurrentReservationsGetExactlyTheLimitAndOneNotice(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let day = self.day
        let decisions = try await withThrowingTaskGroup(of: QuotaDecision.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await storage.quota.reserve(pushToken: "hot", appID: "io.app", day: day, policy: QuotaPolicy(dailyLimit: 50), now: day.start)
                        .decision
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(decisions.filter(\.allowed).count == 50)
        #expect(decisions.filter(\.sendNotice).count == 1)
        let limits = try await storage.quota.rateLimits(pushToken: "hot", appID: "io.app", day: day, policy: QuotaPolicy(dailyLimit: 50))
        #expect(limits.successful == 50 && limits.attempts == 200 && limits.remaining == 0)
        await close()
    }

    /// The day's one notice is durable with the refusal that sent it: a store opened again on the same database (a
    /// restart) refuses without a second notice, and the row still says the notice was sent.
    @Test(arguments: StorageEngineUnderTest.all)
    func theDaysNoticeIsNotSentAgainAfterARestart(engine: StorageEngineUnderTest) async throws {
        let database = try await engine.freshDatabase()
        let policy = QuotaPolicy(dailyLimit: 2)
        let (before, closeBefore) = try await database.open()
        for _ in 0..<2 {
            #expect(try await before.quota.reserve(pushToken: "r", appID: nil, day: day, policy: policy, now: day.start).decision.allowed)
        }
        let refused = try await before.quota.reserve(pushToken: "r", appID: nil, day: day, policy: policy, now: day.start).decision
        #expect(!refused.allowed && refused.sendNotice)
        await closeBefore()

        let (after, closeAfter) = try await database.open()
        let stored = try #require(try await after.admin.history(pushToken: "r").rows.first { $0.day == day.description })
        #expect(stored.noticeSent)
        #expect(stored.counters == UsageCounters(attempts: 3, successful: 2, errors: 0))
        let again = try await after.quota.reserve(pushToken: "r", appID: nil, day: day, policy: policy, now: day.start).decision
        #expect(!again.allowed && !again.sendNotice && again.noticeSent)
        #expect(try await after.admin.history(pushToken: "r").rows.first { $0.day == day.description }?.noticeSent == true)
        await closeAfter()
    }

    /// Every engine's decision is `QuotaDecision.decide` on the state before it, over a grid of states reached by real
    /// reservations: limits 0 to 3 (the default, an app's or the token's override), 0 to one past the limit
    /// successful, the notice sent or not, a failed delivery on the day or not.
    @Test(arguments: StorageEngineUnderTest.all)
    func everyDecisionIsTheRuleOnTheStateBefore(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let day = self.day
        var states: [GridState] = []
        for limit in 0...3 {
            for source in GridState.LimitSource.allCases {
                for successful in 0...(limit + 1) {
                    for noticeSent in [false, true] {
                        for failed in [false, true] {
                            states.append(GridState(limit: limit, source: source, successful: successful, noticeSent: noticeSent, failed: failed))
                        }
                    }
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for state in states {
                group.addTask { try await state.check(on: storage, day: day) }
            }
            try await group.waitForAll()
        }
        await close()
    }

    /// A token's day before one reservation of `everyDecisionIsTheRuleOnTheStateBefore`, and the limit it applies.
    struct GridState: Sendable, CustomStringConvertible {
        /// How the reservation's limit is given.
        enum LimitSource: CaseIterable, Sendable {
            case dailyLimit, appLimit, tokenOverride
        }

        var limit: Int
        var source: LimitSource
        var successful: Int
        var noticeSent: Bool
        var failed: Bool

        var description: String { "limit \(limit) (\(source)), \(successful) successful, notice \(noticeSent), failed \(failed)" }
        var token: String { "grid-\(limit)-\(source)-\(successful)-\(noticeSent)-\(failed)" }

        /// Reaches the state with reservations, reads it through the administration API, reserves once more, and
        /// holds the decision and the row written to the rule.
        func check(on storage: Storage, day: UTCDay) async throws {
            let roomy = QuotaPolicy(dailyLimit: 100)
            if failed {
                let r = try await storage.quota.reserve(pushToken: token, appID: nil, day: day, policy: roomy, now: day.start)
                let record = DeliveryRecord(
                    at: day.start,
                    pushToken: token,
                    appID: nil,
                    platform: .homeAssistant(.android),
                    provider: "p",
                    kind: .notification,
                    counted: true,
                    outcome: .transient
                )
                _ = try await storage.quota.complete(r, record: record)
            }
            for _ in 0..<successful {
                _ = try await storage.quota.reserve(pushToken: token, appID: nil, day: day, policy: roomy, now: day.start)
            }
            if noticeSent {
                _ = try await storage.quota.reserve(
                    pushToken: token,
                    appID: nil,
                    day: day,
                    policy: QuotaPolicy(dailyLimit: successful),
                    now: day.start
                )
            }
            let (policy, appID): (QuotaPolicy, String?) =
                switch source {
                case .dailyLimit: (QuotaPolicy(dailyLimit: limit), nil)
                case .appLimit: (QuotaPolicy(dailyLimit: 100, appLimits: [("io.grid.*", limit)]), "io.grid.app")
                case .tokenOverride: (roomy, nil)
                }
            if source == .tokenOverride { try await storage.admin.setLimit(pushToken: token, limit: limit) }

            let before = try await row(storage, day: day)
            #expect(before?.successful ?? 0 == successful && before?.noticeSent ?? false == noticeSent, "\(self)")
            let expected = QuotaDecision.decide(current: before?.counters ?? UsageCounters(), maximum: limit, noticeSent: before?.noticeSent ?? false)
            let reservation = try await storage.quota.reserve(pushToken: token, appID: appID, day: day, policy: policy, now: day.start)
            #expect(reservation.decision == expected, "\(self)")
            #expect(reservation.maximum == limit, "\(self)")
            let after = try await row(storage, day: day)
            #expect(after?.counters == expected.counters && after?.noticeSent == expected.noticeSent, "\(self)")
        }

        private func row(_ storage: Storage, day: UTCDay) async throws -> UsageRow? {
            try await storage.admin.history(pushToken: token).rows.first { $0.day == day.description }
        }
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func eachUTCDayAndTokenHasItsOwnCount(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let policy = QuotaPolicy(dailyLimit: 2)
        for _ in 0..<3 { _ = try await storage.quota.reserve(pushToken: "a", appID: nil, day: day, policy: policy, now: day.start) }
        let next = day.adding(days: 1)
        #expect(try await storage.quota.reserve(pushToken: "a", appID: nil, day: next, policy: policy, now: next.start).decision.allowed)
        #expect(try await storage.quota.reserve(pushToken: "b", appID: nil, day: day, policy: policy, now: day.start).decision.allowed)
        #expect(try await storage.quota.rateLimits(pushToken: "a", appID: nil, day: day, policy: policy).attempts == 3)
        #expect(try await storage.quota.rateLimits(pushToken: "a", appID: nil, day: next, policy: policy).attempts == 1)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aFailedCountedDeliveryBecomesAnErrorAndFreesItsSlot(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let policy = QuotaPolicy(dailyLimit: 1)
        let r = try await storage.quota.reserve(pushToken: "x", appID: "a", day: day, policy: policy, now: day.start)
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
        #expect(try await storage.quota.complete(r, record: record) == UsageCounters(attempts: 1, successful: 0, errors: 1))
        #expect(try await storage.quota.reserve(pushToken: "x", appID: "a", day: day, policy: policy, now: day.start).decision.allowed)
        let logged = try await storage.deliveries.recentDeliveries(pushToken: "x")
        #expect(logged.map(\.outcome) == [.transient])
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aDeadTokenIsAnsweredDeadUncountedUntilItsMarkExpires(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let policy = QuotaPolicy()
        let mark = DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "gone", until: day.start.addingTimeInterval(3600))
        let r = try await storage.quota.reserve(pushToken: "d", appID: nil, day: day, policy: policy, now: day.start)
        let record = DeliveryRecord(
            at: day.start,
            pushToken: "d",
            appID: nil,
            platform: .homeAssistant(.android),
            provider: "fcm",
            kind: .notification,
            counted: true,
            outcome: .invalidToken
        )
        _ = try await storage.quota.complete(r, record: record, markDead: mark)
        let dead = try await storage.quota.reserveUnlessDead(
            pushToken: "d",
            appID: nil,
            webhookID: nil,
            day: day,
            policy: policy,
            now: day.start.addingTimeInterval(60),
            checkDead: true
        )
        guard case .dead(let token, let limits) = dead else {
            Issue.record("expected dead, got \(dead)")
            return
        }
        #expect(token.reason == "UNREGISTERED")
        #expect(limits.attempts == 1 && limits.errors == 1)
        let later = day.start.addingTimeInterval(7200)
        #expect(try await storage.deliveries.deadToken("d", now: later) == nil)
        let after = try await storage.quota.reserveUnlessDead(
            pushToken: "d",
            appID: nil,
            webhookID: nil,
            day: day,
            policy: policy,
            now: later,
            checkDead: true
        )
        guard case .reserved(let again) = after else {
            Issue.record("expected a reservation after expiry")
            return
        }
        #expect(again.decision.allowed)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func rateLimitsUseTheAppTheTokenLastPostedWith(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let policy = QuotaPolicy(dailyLimit: 500, appLimits: [("io.small", 7)])
        _ = try await storage.quota.reserve(pushToken: "b", appID: "io.small", day: day.adding(days: -1), policy: policy, now: day.start)
        #expect(try await storage.quota.rateLimits(pushToken: "b", appID: nil, day: day, policy: policy).maximum == 7)
        #expect(try await storage.quota.rateLimits(pushToken: "never", appID: nil, day: day, policy: policy).maximum == 500)
        await close()
    }

    /// Delivered records are written in the background (PostgreSQL batches the ones that arrive together); `flush`
    /// waits for every one recorded before it, each row as it was given, nulls included.
    @Test(arguments: StorageEngineUnderTest.all)
    func everyDeliveredRecordIsWrittenByTheFlush(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let day = self.day
        let failures = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<300 {
                group.addTask {
                    let record = DeliveryRecord(
                        at: day.start.addingTimeInterval(Double(i)),
                        pushToken: "many-\(i % 3)",
                        appID: i % 2 == 0 ? "io.app" : nil,
                        platform: i % 2 == 0 ? .homeAssistant(.android) : nil,
                        provider: "fcm",
                        kind: .notification,
                        counted: i % 5 != 0,
                        outcome: .delivered,
                        messageID: "m-\(i)",
                        payload: i == 7 ? "{\"it's\":\"é\\n\"}" : nil
                    )
                    storage.quota.recordDelivered(record, day: day) { _ in failures.withLock { $0 += 1 } }
                }
            }
        }
        try await storage.engine.flush()
        #expect(failures.withLock { $0 } == 0)
        var rows: [LoggedDelivery] = []
        for t in 0..<3 { rows += try await storage.deliveries.recentDeliveries(pushToken: "many-\(t)", limit: 1000) }
        #expect(rows.count == 300)
        #expect(Set(rows.compactMap(\.messageID)).count == 300)
        let seven = try #require(rows.first { $0.messageID == "m-7" })
        #expect(seven.payload == "{\"it's\":\"é\\n\"}")
        #expect(seven.appID == nil && seven.platform == nil && seven.counted)
        let ten = try #require(rows.first { $0.messageID == "m-10" })
        #expect(
            ten.appID == "io.app" && ten.platform == .homeAssistant(.android) && !ten.counted && ten.day.description == "2026-11-21"
                && ten.pushToken == "many-1"
        )
        await close()
    }

    /// Many tokens at once, several requests each, some with overrides, one remembered as dead (PostgreSQL decides
    /// the requests that arrive together in shared statements): each token still gets exactly its maximum and one
    /// notice, the dead one nothing counted.
    @Test(arguments: StorageEngineUnderTest.all)
    func manyTokensAtOnceEachGetExactlyTheirMaximum(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let day = self.day
        let policy = QuotaPolicy(dailyLimit: 10)
        try await storage.admin.setLimit(pushToken: "t-3", limit: 2)
        try await storage.deliveries.markDead(
            "t-dead",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: nil, until: day.start.addingTimeInterval(3600)),
            now: day.start
        )
        let tokens = (0..<20).map { "t-\($0)" } + ["t-dead"]
        let results = try await withThrowingTaskGroup(of: (String, ReserveResult).self) { group in
            for round in 0..<15 {
                for token in tokens {
                    group.addTask {
                        let result = try await storage.quota.reserveUnlessDead(
                            pushToken: token,
                            appID: round == 0 ? "io.app" : nil,
                            webhookID: nil,
                            day: day,
                            policy: policy,
                            now: day.start,
                            checkDead: true
                        )
                        return (token, result)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for token in tokens {
            let mine = results.filter { $0.0 == token }.map(\.1)
            #expect(mine.count == 15)
            if token == "t-dead" {
                #expect(mine.allSatisfy { if case .dead = $0 { true } else { false } })
                continue
            }
            let decisions = mine.compactMap { if case .reserved(let r) = $0 { r.decision } else { nil } }
            let maximum = token == "t-3" ? 2 : 10
            #expect(decisions.count == 15)
            #expect(decisions.filter(\.allowed).count == maximum, "\(token)")
            #expect(decisions.filter(\.sendNotice).count == 1, "\(token)")
            let limits = try await storage.quota.rateLimits(pushToken: token, appID: nil, day: day, policy: policy)
            #expect(limits.attempts == 15 && limits.successful == maximum && limits.maximum == maximum)
        }
        #expect(try await storage.quota.rateLimits(pushToken: "t-dead", appID: nil, day: day, policy: policy).attempts == 0)
        await close()
    }
}
