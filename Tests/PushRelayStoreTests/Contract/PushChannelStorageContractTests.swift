import Foundation
import PushRelayCore
import PushRelayStore
import Testing

/// What any engine's `PushChannelStorage` must do: messages owed to devices, channel tokens and bindings; a message
/// whose row holds a value no build writes (platform, state, time, notification) is refused, naming the message, the
/// column and the value, never read with a value it was not stored with.
@Suite struct PushChannelStorageContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func message(_ id: String, webhook: String = "w1", token: String = "t1", expires: TimeInterval = 3600) -> PushChannelMessage {
        PushChannelMessage(
            id: id,
            webhookID: webhook,
            pushToken: token,
            platform: .android,
            notification: ["message": "hi"],
            state: .queued,
            fallback: false,
            createdAt: now,
            expiresAt: now.addingTimeInterval(expires)
        )
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func messagesAreKeptUntilRemovedOrExpired(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
        try await store.save(message("m1"))
        try await store.enqueueSave(message("m2", expires: 10)).value
        try await store.save(message("m3", webhook: "w2", token: "t2"))
        #expect(try await store.pending(webhookID: "w1", pushToken: nil).map(\.id).sorted() == ["m1", "m2"])
        #expect(try await store.pending(webhookID: nil, pushToken: "t2").map(\.id) == ["m3"])
        #expect(try await store.remove(id: "m1", count: .delivered, token: "t1", now: now))
        #expect(try await store.remove(id: "m1", count: nil, token: nil, now: now) == false)
        #expect(try await store.dropExpired(now: now.addingTimeInterval(60)) == 1)
        #expect(try await store.all().map(\.id) == ["m3"])
        await close()
    }

    /// The figures the local-only queue's bounds are checked against: messages per token, and notification bytes in all.
    @Test(arguments: StorageEngineUnderTest.all)
    func storedMessagesAreCountedPerTokenAndMeasuredInAll(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
        #expect(try await store.storedCount(pushToken: "t1") == 0)
        #expect(try await store.storedBytes() == 0)
        var big = message("m1")
        big.notification = ["message": .string("é" + String(repeating: "x", count: 10_000))]
        try await store.save(big)
        try await store.save(message("m2"))
        try await store.save(message("m3", webhook: "w2", token: "t2"))
        #expect(try await store.storedCount(pushToken: "t1") == 2)
        #expect(try await store.storedCount(pushToken: "t2") == 1)
        let bytes = [big, message("m2"), message("m3")].map { $0.notification.jsonString().utf8.count }.reduce(0, +)
        #expect(try await store.storedBytes() == bytes, "UTF-8 bytes, not characters")
        #expect(try await store.remove(id: "m1", count: nil, token: nil, now: now))
        #expect(try await store.storedCount(pushToken: "t1") == 1)
        #expect(try await store.storedBytes() == bytes - big.notification.jsonString().utf8.count)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func channelTokensAreLookedUpByDigestAndRevoked(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
        let (token, id) = try await store.createToken(webhookID: "w1", label: "kitchen", now: now)
        #expect(try await store.webhookID(forChannelToken: token) == "w1")
        #expect(try await store.webhookID(forChannelToken: token + "x") == nil)
        #expect(try await store.listTokens().map(\.label) == ["kitchen"])
        #expect(try await store.revokeToken(id: id, now: now))
        #expect(try await store.webhookID(forChannelToken: token) == nil)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func bindingsAreOnePairPerTokenAndPerWebhook(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
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
        await close()
    }
    /// A binding records when Home Assistant last sent its pair (`bind`, `refresh`); `pruneBindings` deletes the pairs
    /// not sent since its cutoff, oldest first and at most its limit a step, and nothing else.
    @Test(arguments: StorageEngineUnderTest.all)
    func bindingsNotSentForTheRetentionArePruned(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
        let old = now.addingTimeInterval(-40 * 86_400)
        let pairs = (1...5).map { PushChannelBinding(pushToken: "T\($0)", webhookID: "w\($0)") }
        for pair in pairs { _ = try await store.bind(pair, now: old) }
        // Sent again since: by a bind of the same pair, by a refresh; the third only a day ago.
        #expect(try await store.bind(pairs[1], now: now) == [])
        #expect(try await store.refresh(pairs[2], now: now))
        #expect(try await store.refresh(pairs[3], now: now.addingTimeInterval(-86_400)))
        // A refresh never stores or moves a pair.
        #expect(try await store.refresh(PushChannelBinding(pushToken: "T1", webhookID: "elsewhere"), now: now) == false)
        #expect(try await store.refresh(PushChannelBinding(pushToken: "new", webhookID: "w-new"), now: now) == false)
        #expect(try await store.binding(pushToken: "new") == nil)
        #expect(try await store.binding(pushToken: "T1") == pairs[0])

        // 30 days of retention: what was last sent before the start of the day 30 days ago goes.
        let cutoff = UTCDay(now).adding(days: -30).start
        #expect(try await store.pruneBindings(notSentSince: cutoff, limit: 1) == 1, "a step deletes at most its limit")
        #expect(try await store.pruneBindings(notSentSince: cutoff, limit: 100) == 1)
        #expect(try await store.pruneBindings(notSentSince: cutoff, limit: 100) == 0)
        #expect(Set(try await store.bindings()) == [pairs[1], pairs[2], pairs[3]])
        await close()
    }

    /// A push token past `FieldLimits.token` or a webhook id past `FieldLimits.identifier` is refused before anything is
    /// stored; values at the bounds are stored.
    @Test(arguments: StorageEngineUnderTest.all)
    func aBindingPastTheFieldLimitsIsRefused(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
        let longToken = PushChannelBinding(pushToken: String(repeating: "t", count: FieldLimits.token + 1), webhookID: "w1")
        let longWebhook = PushChannelBinding(pushToken: "T1", webhookID: String(repeating: "w", count: FieldLimits.identifier + 1))
        for pair in [longToken, longWebhook] {
            await #expect(throws: PushChannelBinding.TooLong(pair)) { _ = try await store.bind(pair, now: now) }
            #expect(try await store.refresh(pair, now: now) == false)
        }
        #expect(try await store.bindings().isEmpty)
        let atTheBounds = PushChannelBinding(
            pushToken: String(repeating: "t", count: FieldLimits.token),
            webhookID: String(repeating: "w", count: FieldLimits.identifier)
        )
        #expect(try await store.bind(atTheBounds, now: now) == [])
        #expect(try await store.bindings() == [atTheBounds])
        await close()
    }

    /// Many binds at once over a few tokens and webhook ids (the PostgreSQL engine writes them in batches): each
    /// `whileWriting` sees the pairs its bind replaced, in commit order, so replaying those callbacks in the order they
    /// ran rebuilds exactly the stored bindings, and no bind misses a pair it replaced.
    @Test(arguments: StorageEngineUnderTest.all)
    func concurrentBindsReportTheirReplacedPairsInCommitOrder(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.pushChannel
        let now = self.now
        let log = Locked<[(bound: PushChannelBinding, replaced: [PushChannelBinding])]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<300 {
                let binding = PushChannelBinding(pushToken: "T\((i * 7) % 11)", webhookID: "w\((i * 5) % 13)")
                group.addTask {
                    let replaced = try await store.bind(binding, now: now) { replaced in
                        log.withLock { $0.append((binding, replaced)) }
                    }
                    #expect(replaced.allSatisfy { $0 != binding })
                }
            }
            try await group.waitForAll()
        }
        var model: Set<PushChannelBinding> = []
        for (bound, replaced) in log.withLock({ $0 }) {
            let conflicting = model.filter { ($0.pushToken == bound.pushToken || $0.webhookID == bound.webhookID) && $0 != bound }
            #expect(Set(replaced) == conflicting, "bind \(bound) replaced \(replaced), expected \(conflicting)")
            model.subtract(conflicting)
            model.insert(bound)
        }
        #expect(log.withLock { $0.count } == 300)
        #expect(Set(try await store.bindings()) == model)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aMessageHoldingAValueNoBuildWritesIsLeftOutAndStopsNoOtherMessage(engine: StorageEngineUnderTest) async throws {
        let (storage, execute, close) = try await engine.openWithPlainSQL()
        let store = storage.pushChannel
        let broken = [
            ("platform", "windows"), ("state", "sent"), ("created_at", "yesterday"), ("expires_at", "2026-13-45"),
            ("notification", "{\"message\": "),
        ]
        for (column, value) in broken {
            let id = "m-\(column)"
            try await store.save(message(id, webhook: "w-\(column)", token: "t-\(column)"))
            try await store.save(message("\(id)-good", webhook: "w-\(column)", token: "t-\(column)"))
            try await execute("UPDATE channel_messages SET \(column) = '\(value)' WHERE id = '\(id)'")
            #expect(try await store.pending(webhookID: "w-\(column)", pushToken: nil).map(\.id) == ["\(id)-good"])
            #expect(try await store.pending(webhookID: nil, pushToken: "t-\(column)").map(\.id) == ["\(id)-good"])
            #expect(try await store.all().map(\.id) == ["\(id)-good"])
            // Left in place: the row is still there for a build that can read it.
            #expect(try await store.storedCount(pushToken: "t-\(column)") == 2)
            try await execute("DELETE FROM channel_messages WHERE webhook_id = 'w-\(column)'")
        }
        await close()
    }
}
