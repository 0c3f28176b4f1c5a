import Foundation
import PushRelayCore
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// What any engine's `DeliveryLog` must do: give back every row written before the read, and the ledger's queued rows
/// once flushed (all their fields, newest first, by token or all, at most `limit`); count a day by hour, provider, kind
/// and outcome; remember dead tokens until their mark expires, the latest mark winning, forgotten on demand; refuse a row
/// holding a value no build writes, naming its column and value.
@Suite struct DeliveryLogContractTests {
    let day = UTCDay(string: "2026-11-21")!

    func record(
        _ token: String,
        at: Date,
        provider: String = "fcm",
        kind: DeliveryKind = .notification,
        counted: Bool = false,
        outcome: DeliveryOutcomeClass = .delivered
    ) -> DeliveryRecord {
        DeliveryRecord(
            at: at,
            pushToken: token,
            appID: "io.app",
            platform: .homeAssistant(.android),
            provider: provider,
            kind: kind,
            counted: counted,
            outcome: outcome
        )
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aLoggedRowIsReadBackWithEveryField(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let at = day.start.addingTimeInterval(13 * 3600 + 5 * 60 + 0.25)
        try await storage.deliveries.log(
            DeliveryRecord(
                at: at,
                pushToken: "tok-a",
                appID: "io.app",
                platform: .homeAssistant(.ios),
                provider: "apns",
                kind: .rateLimitNotice,
                counted: true,
                outcome: .payloadTooLarge,
                messageID: "msg-1",
                errorMessage: "too big",
                payload: #"{"aps":{}}"#
            )
        )
        try await storage.deliveries.log(
            DeliveryRecord(
                at: at,
                pushToken: "tok-b",
                appID: nil,
                platform: nil,
                provider: "fcm",
                kind: .callInvite,
                counted: false,
                outcome: .delivered
            )
        )
        // No flush: a read sees every write answered before it.
        let a = try #require(try await storage.deliveries.recentDeliveries(pushToken: "tok-a").first)
        #expect(ISO8601UTC.string(a.at) == ISO8601UTC.string(at))
        #expect(a.day.description == "2026-11-21")
        #expect(a.pushToken == "tok-a")
        #expect(a.appID == "io.app")
        #expect(a.platform == .homeAssistant(.ios))
        #expect(a.provider == "apns")
        #expect(a.kind == .rateLimitNotice)
        #expect(a.counted)
        #expect(a.outcome == .payloadTooLarge)
        #expect(a.messageID == "msg-1")
        #expect(a.errorMessage == "too big")
        #expect(a.payload == #"{"aps":{}}"#)
        let b = try #require(try await storage.deliveries.recentDeliveries(pushToken: "tok-b").first)
        #expect(b.appID == nil && b.platform == nil && b.messageID == nil && b.errorMessage == nil && b.payload == nil)
        #expect(b.kind == .callInvite && !b.counted && b.outcome == .delivered)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func recentRowsAreNewestFirstByTokenOrAllAndAtMostTheLimit(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        for i in 0..<6 {
            let at = day.start.addingTimeInterval(Double(i) * 60)
            try await storage.deliveries.log(record(i.isMultiple(of: 2) ? "even" : "odd", at: at, provider: "p\(i)"))
        }
        let all = try await storage.deliveries.recentDeliveries(pushToken: nil, limit: 100)
        #expect(all.map(\.provider) == ["p5", "p4", "p3", "p2", "p1", "p0"])
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.id > $1.id }, "ids grow with each write")
        #expect(try await storage.deliveries.recentDeliveries(pushToken: "even").map(\.provider) == ["p4", "p2", "p0"])
        #expect(try await storage.deliveries.recentDeliveries(pushToken: "odd", limit: 2).map(\.provider) == ["p5", "p3"])
        #expect(try await storage.deliveries.recentDeliveries(pushToken: nil, limit: 3).map(\.provider) == ["p5", "p4", "p3"])
        #expect(try await storage.deliveries.recentDeliveries(pushToken: "nobody").isEmpty)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func writesFromManyTasksAreAllThere(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let day = self.day
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 {
                group.addTask {
                    try await storage.deliveries.log(
                        DeliveryRecord(
                            at: day.start,
                            pushToken: "many",
                            appID: nil,
                            platform: nil,
                            provider: "p",
                            kind: .notification,
                            counted: false,
                            outcome: .delivered,
                            messageID: "m\(i)"
                        )
                    )
                }
            }
            try await group.waitForAll()
        }
        try await storage.deliveries.flush()
        let rows = try await storage.deliveries.recentDeliveries(pushToken: "many")
        #expect(Set(rows.compactMap(\.messageID)) == Set((0..<50).map { "m\($0)" }))
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aFlushMakesTheLedgersQueuedDeliveredRowsReadable(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let failures = Locked(0)
        for i in 0..<20 {
            var r = record("queued", at: day.start.addingTimeInterval(Double(i)), counted: true)
            r.messageID = "m\(i)"
            storage.quota.recordDelivered(r, day: day) { _ in failures.withLock { $0 += 1 } }
        }
        try await storage.deliveries.flush()
        let rows = try await storage.deliveries.recentDeliveries(pushToken: "queued")
        #expect(rows.compactMap(\.messageID) == (0..<20).reversed().map { "m\($0)" })
        #expect(failures.withLock { $0 } == 0)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func theDaySummaryCountsItsRowsByHourProviderKindAndOutcome(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let previous = day.adding(days: -1)
        try await storage.deliveries.log(record("t", at: previous.start.addingTimeInterval(23 * 3600)))
        let nine = day.start.addingTimeInterval(9 * 3600 + 30)
        try await storage.deliveries.log(record("t", at: nine, counted: true))
        try await storage.deliveries.log(record("t", at: nine.addingTimeInterval(60), counted: true))
        try await storage.deliveries.log(record("t", at: nine.addingTimeInterval(120), counted: true, outcome: .invalidToken))
        try await storage.deliveries.log(record("u", at: day.start.addingTimeInterval(17 * 3600), provider: "apns", kind: .webPushRelay))
        try await storage.deliveries.log(record("t", at: day.adding(days: 1).start))

        let summary = try await storage.deliveries.deliverySummary(day: day, scanLimit: 100)
        #expect(summary.day == day)
        #expect(summary.complete)
        #expect(
            summary.counts == [
                .init(hour: 9, provider: "fcm", kind: .notification, counted: true, outcome: .delivered): 2,
                .init(hour: 9, provider: "fcm", kind: .notification, counted: true, outcome: .invalidToken): 1,
                .init(hour: 17, provider: "apns", kind: .webPushRelay, counted: false, outcome: .delivered): 1,
            ]
        )
        // A scan that stops before it reaches the day's start says it is partial.
        let partial = try await storage.deliveries.deliverySummary(day: day, scanLimit: 2)
        #expect(!partial.complete)
        #expect(partial.counts.values.reduce(0, +) == 1)
        #expect(try await storage.deliveries.deliverySummary(day: day.adding(days: -2), scanLimit: 100).counts.isEmpty)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aDeadMarkIsLiveUntilItExpires(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let now = day.start.addingTimeInterval(3600)
        let until = now.addingTimeInterval(600)
        #expect(try await storage.deliveries.deadToken("dead", now: now) == nil)
        try await storage.deliveries.markDead("dead", DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "gone", until: until), now: now)
        let dead = try #require(try await storage.deliveries.deadToken("dead", now: now))
        #expect(
            dead
                == DeadToken(
                    provider: "fcm",
                    reason: "UNREGISTERED",
                    message: "gone",
                    markedAt: ISO8601UTC.string(now),
                    expiresAt: ISO8601UTC.string(until)
                )
        )
        #expect(try await storage.deliveries.deadToken("dead", now: until.addingTimeInterval(-1)) != nil)
        #expect(try await storage.deliveries.deadToken("dead", now: until) == nil, "a mark is live before its expiry only")
        #expect(try await storage.deliveries.deadToken("other", now: now) == nil)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func theLatestMarkWinsAndAForgottenTokenIsAliveAgain(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let now = day.start
        try await storage.deliveries.markDead(
            "t",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "gone", until: now.addingTimeInterval(60)),
            now: now
        )
        let later = now.addingTimeInterval(30)
        let remark = DeadMark(provider: "apns", reason: "BadDeviceToken", message: nil, until: later.addingTimeInterval(3600))
        try await storage.deliveries.markDead("t", remark, now: later)
        let dead = try #require(try await storage.deliveries.deadToken("t", now: now.addingTimeInterval(120)))
        #expect(
            dead
                == DeadToken(
                    provider: "apns",
                    reason: "BadDeviceToken",
                    message: nil,
                    markedAt: ISO8601UTC.string(later),
                    expiresAt: ISO8601UTC.string(remark.until)
                )
        )

        #expect(try await storage.deliveries.forgetDead("t"))
        #expect(try await storage.deliveries.deadToken("t", now: later) == nil)
        #expect(try await storage.deliveries.forgetDead("t") == false)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func theListedDeadTokensAreTheLiveOnesOfFailedRowsNewestMarkFirst(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let now = day.start.addingTimeInterval(7200)
        for (i, token) in ["a", "b", "c", "expired"].enumerated() {
            try await storage.deliveries.log(record(token, at: now, outcome: .invalidToken))
            let marked = now.addingTimeInterval(Double(i))
            let until = token == "expired" ? now : now.addingTimeInterval(3600)
            try await storage.deliveries.markDead(token, DeadMark(provider: "fcm", reason: "UNREGISTERED", message: nil, until: until), now: marked)
        }
        // Marked dead without a failed row, and a failed row whose token is alive: neither is listed.
        try await storage.deliveries.markDead(
            "quiet",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: nil, until: now.addingTimeInterval(3600)),
            now: now
        )
        try await storage.deliveries.log(record("alive", at: now, outcome: .transient))

        #expect(try await storage.deliveries.deadTokens(now: now, limit: 10).map(\.pushToken) == ["c", "b", "a"])
        #expect(try await storage.deliveries.deadTokens(now: now, limit: 2).count == 2)
        let listed = try #require(try await storage.deliveries.deadTokens(now: now, limit: 10).first)
        #expect(listed.dead.provider == "fcm" && listed.dead.reason == "UNREGISTERED")
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aRowHoldingAValueNoBuildWritesIsRefusedNamingTheColumnAndTheValue(engine: StorageEngineUnderTest) async throws {
        let (storage, execute, close) = try await engine.openWithPlainSQL()
        let at = day.start.addingTimeInterval(3600)
        for (column, value) in [("platform", "windows"), ("platform", "matrix-fax"), ("kind", "fax")] {
            let token = "tok-\(column)-\(value)"
            try await storage.deliveries.log(record(token, at: at))
            try await storage.deliveries.flush()
            let id = try #require(try await storage.deliveries.recentDeliveries(pushToken: token).first?.id)
            try await execute("UPDATE delivery_log SET \(column) = '\(value)' WHERE id = \(id)")
            await #expect(throws: StorageError.unreadableRow(table: "delivery_log", id: id, column: column, value: value)) {
                try await storage.deliveries.recentDeliveries(pushToken: token)
            }
        }
        await close()
    }
}
