import Foundation
import PushRelayStore
import Testing

/// What any engine's `MatrixStorage` must do: the de-duplication window and the retry queue.
@Suite struct MatrixStorageContractTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: StorageEngineUnderTest.all)
    func sentEventsAndDeadKeysAreFoundInTheirWindow(engine: StorageEngineUnderTest) async throws {
        let (storage, close) = try await engine.open()
        let store = storage.matrix
        store.markSent(eventID: "$e1", pushkeys: ["k1", "k2"], at: now) { Issue.record("markSent failed: \($0)") }
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
        let due = try await store.due(now: now.addingTimeInterval(30), limit: 10)
        #expect(due.map(\.pushkey) == ["soon", "late"])
        let first = try #require(due.first)
        try await store.reschedule(id: first.id, attempts: 2, next: now.addingTimeInterval(100), lastError: "again")
        #expect(try await store.due(now: now.addingTimeInterval(30), limit: 10).map(\.pushkey) == ["late"])
        try await store.remove(id: due[1].id)
        let left = try await store.queued()
        #expect(left.map(\.pushkey) == ["soon"] && left.first?.attempts == 2 && left.first?.lastError == "again")
        await close()
    }
}
