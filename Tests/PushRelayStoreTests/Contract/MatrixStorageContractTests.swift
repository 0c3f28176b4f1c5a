import Foundation
import PushRelayStore
import Testing

/// What any engine's `MatrixStorage` must do: the de-duplication window and the retry queue.
///
/// ThreadSanitizer: de-duplication claims and retry leases taken by concurrent claimers, on both engines.
@Suite struct MatrixStorageContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: StorageEngineUnderTest.all)
    func sentEventsAndDeadKeysAreFoundInTheirWindow(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.matrix
        try await store.markSent(eventID: "$e1", pushkeys: ["k1", "k2"], at: now)
        // Dead keys are written by the delivery pipeline's one dead-token memory; the gateway's lookup reads them.
        try await storage.deliveries.markDead(
            "matrix:app:k3",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "gone", until: now.addingTimeInterval(60)),
            now: now
        )
        let found = try await store.lookup(
            eventID: "$e1",
            pushkeys: ["k1", "k3"],
            deadKeys: ["matrix:app:k3", "matrix:app:k1"],
            since: now.addingTimeInterval(-10),
            now: now
        )
        #expect(found.seen == ["k1"])
        #expect(found.dead == ["matrix:app:k3"])
        #expect(try await store.lookup(eventID: "$e1", pushkeys: ["k1"], deadKeys: [], since: now.addingTimeInterval(1), now: now).seen.isEmpty)
        #expect(try await store.pruneDedup(before: now.addingTimeInterval(1)) == 2)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aMarkIsSeenAsSoonAsMarkSentReturns(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.matrix
        for i in 0..<20 {
            try await store.markSent(eventID: "$e\(i)", pushkeys: ["k"], at: now)
            let found = try await store.lookup(eventID: "$e\(i)", pushkeys: ["k"], deadKeys: [], since: now, now: now)
            #expect(found.seen == ["k"], "mark \(i)")
            #expect(try await store.claim(eventID: "$e\(i)", pushkeys: ["k"], since: now, at: now).isEmpty, "mark \(i)")
        }
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func oneOfConcurrentClaimsWinsAndAReleaseEndsIt(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.matrix
        let since = now.addingTimeInterval(-60)
        let wins = try await withThrowingTaskGroup(of: Set<String>.self) { group in
            for _ in 0..<16 {
                group.addTask { try await store.claim(eventID: "$e1", pushkeys: ["k1", "k2"], since: since, at: self.now) }
            }
            return try await group.reduce(into: [String]()) { $0 += $1.sorted() }
        }
        #expect(wins.sorted() == ["k1", "k2"])
        let seen = try await store.lookup(eventID: "$e1", pushkeys: ["k1", "k2"], deadKeys: [], since: since, now: now).seen
        #expect(seen == ["k1", "k2"])

        try await store.release(eventID: "$e1", pushkeys: ["k1"], claimedAt: now)
        #expect(try await store.lookup(eventID: "$e1", pushkeys: ["k1", "k2"], deadKeys: [], since: since, now: now).seen == ["k2"])
        let later = now.addingTimeInterval(1)
        #expect(try await store.claim(eventID: "$e1", pushkeys: ["k1", "k2", "k1"], since: since, at: later) == ["k1"])

        // A mark written over a claim is not released with it.
        try await store.markSent(eventID: "$e1", pushkeys: ["k2"], at: later)
        try await store.release(eventID: "$e1", pushkeys: ["k2"], claimedAt: now)
        #expect(try await store.lookup(eventID: "$e1", pushkeys: ["k2"], deadKeys: [], since: since, now: now).seen == ["k2"])

        // Once the window has passed, the pair can be claimed again.
        let next = now.addingTimeInterval(120)
        #expect(try await store.claim(eventID: "$e1", pushkeys: ["k1", "k2"], since: next.addingTimeInterval(-60), at: next) == ["k1", "k2"])
        #expect(try await store.claim(eventID: "$e1", pushkeys: ["k1", "k2"], since: next.addingTimeInterval(-60), at: next).isEmpty)
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func claimUnlessDeadSkipsDeadDevicesAndOneOfConcurrentClaimsWins(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.matrix
        let since = now.addingTimeInterval(-60)
        try await storage.deliveries.markDead(
            "matrix:a:k3",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "gone", until: now.addingTimeInterval(60)),
            now: now
        )
        try await store.markSent(eventID: "$e1", pushkeys: ["k2"], at: now)
        // k1 is free, k2 was sent already, k3 is dead under app a; k4 is dead under a but alive under b, so it is claimed.
        try await storage.deliveries.markDead(
            "matrix:a:k4",
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "gone", until: now.addingTimeInterval(60)),
            now: now
        )
        let devices = [("k1", "a"), ("k2", "a"), ("k3", "a"), ("k4", "a"), ("k4", "b")].map { (pushkey: $0.0, deadKey: "matrix:\($0.1):\($0.0)") }
        let wins = try await withThrowingTaskGroup(of: (claimed: Set<String>, dead: Set<String>).self) { group in
            for _ in 0..<8 {
                group.addTask { try await store.claimUnlessDead(eventID: "$e1", devices: devices, since: since, at: self.now) }
            }
            return try await group.reduce(into: [(claimed: Set<String>, dead: Set<String>)]()) { $0.append($1) }
        }
        #expect(wins.flatMap { $0.claimed.sorted() }.sorted() == ["k1", "k4"])
        #expect(wins.allSatisfy { $0.dead == ["matrix:a:k3", "matrix:a:k4"] })
        #expect(try await store.lookup(eventID: "$e1", pushkeys: ["k1", "k3", "k4"], deadKeys: [], since: since, now: now).seen == ["k1", "k4"])
        await close()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func theRetryQueueHandsOutDueItemsInOrder(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.matrix
        try await store.enqueue(
            [(appID: "a", pushkey: "late", eventID: "$1", notification: "{}", lastError: "503")],
            attempts: 1,
            nextAttemptAt: now.addingTimeInterval(20),
            now: now
        )
        try await store.enqueue(
            [(appID: "a", pushkey: "soon", eventID: "$2", notification: "{}", lastError: "503")],
            attempts: 1,
            nextAttemptAt: now.addingTimeInterval(10),
            now: now
        )
        #expect(try await store.due(now: now, limit: 10).isEmpty)
        #expect(try await store.queuedCount() == 2, "matrix.retry.max_queued is checked against this")
        let due = try await store.due(now: now.addingTimeInterval(30), limit: 10)
        #expect(due.map(\.pushkey) == ["soon", "late"])
        let first = try #require(due.first)
        try await store.reschedule(id: first.id, attempts: 2, next: now.addingTimeInterval(100), lastError: "again")
        #expect(try await store.due(now: now.addingTimeInterval(30), limit: 10).map(\.pushkey) == ["late"])
        try await store.remove(id: due[1].id)
        let left = try await store.queued()
        #expect(left.map(\.pushkey) == ["soon"] && left.first?.attempts == 2 && left.first?.lastError == "again")
        #expect(try await store.queuedCount() == 1)
        await close()
    }
}
