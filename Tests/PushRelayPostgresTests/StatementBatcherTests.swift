import PushRelayCore
import PushRelayTestHarness
import Testing

@testable import PushRelayPostgres

/// The batching rule behind PostgreSQL's reservations, channel lookups and binds, without a database: a lone request
/// goes at once; requests made while a batch runs go together in the next, in arrival order; a conflict key is never
/// twice in a batch; a failed batch fails only its own requests.
///
/// ThreadSanitizer: batches formed from requests made while another batch runs.
@Suite struct StatementBatcherTests {
    /// Holds the first batch until `open()`, and records every batch.
    final class Gate: Sendable {
        let batches = Locked<[[Int]]>([])
        private let held = Locked<CheckedContinuation<Void, Never>?>(nil)
        private let first = Locked(true)

        func run(_ batch: [Int]) async {
            batches.withLock { $0.append(batch) }
            guard
                first.withLock({ f in
                    defer { f = false }
                    return f
                })
            else { return }
            await withCheckedContinuation { c in held.withLock { $0 = c } }
        }

        var isHolding: Bool { held.withLock { $0 != nil } }

        func open() {
            held.withLock {
                $0?.resume()
                $0 = nil
            }
        }
    }

    @Test func aLoneRequestGoesAtOnceAndLaterOnesWaitForTheRunningBatch() async throws {
        let gate = Gate()
        let batcher = StatementBatcher<Int, Int>(maxBatch: 3, maxRunning: 1) { batch in
            await gate.run(batch)
            return batch.map { $0 * 10 }
        }
        let answers = Locked<[Int: Int]>([:])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let a = try await batcher.submit(0)
                answers.withLock { $0[0] = a }
            }
            try await eventually("a batch is running") { gate.isHolding }
            for i in 1...5 {
                group.addTask {
                    let a = try await batcher.submit(i)
                    answers.withLock { $0[i] = a }
                }
            }
            try await eventually("five requests wait") { batcher.waiting == 5 }
            #expect(gate.batches.withLock { $0 } == [[0]], "nothing else is sent while the only batch allowed runs")
            gate.open()
            try await group.waitForAll()
        }
        #expect(answers.withLock { $0 } == [0: 0, 1: 10, 2: 20, 3: 30, 4: 40, 5: 50])
        let later = gate.batches.withLock { Array($0.dropFirst()) }
        #expect(later.map(\.count).allSatisfy { $0 <= 3 }, "at most maxBatch a batch: \(later)")
        #expect(later.flatMap { $0 }.sorted() == [1, 2, 3, 4, 5])
        #expect(later.count == 2, "the five waiting requests leave in two batches: \(later)")
    }

    @Test func aConflictKeyIsNeverTwiceInOneBatch() async throws {
        let gate = Gate()
        let batcher = StatementBatcher<Int, Int>(maxBatch: 100, maxRunning: 1, conflictKey: { "\($0 % 2)" }) { batch in
            await gate.run(batch)
            return batch
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask { try await batcher.submit(-2) }
            try await eventually("a batch is running") { gate.isHolding }
            for i in 0..<6 { group.addTask { try await batcher.submit(i) } }
            try await eventually("six requests wait") { batcher.waiting == 6 }
            gate.open()
            #expect(try await group.reduce(into: []) { $0.append($1) }.sorted() == [-2, 0, 1, 2, 3, 4, 5])
        }
        for batch in gate.batches.withLock({ $0 }) {
            #expect(Set(batch.map { $0 % 2 }).count == batch.count, "one even and one odd at most: \(batch)")
        }
    }

    /// A request `batchable` refuses (a string PostgreSQL cannot hold) runs at once in a batch of its own, even while
    /// the only batch allowed is running, so its error never reaches other requests.
    @Test func aRequestThatIsNotBatchableRunsAloneAtOnce() async throws {
        let gate = Gate()
        let batcher = StatementBatcher<Int, Int>(maxBatch: 10, maxRunning: 1, batchable: { $0 >= 0 }) { batch in
            await gate.run(batch)
            return batch
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask { try await batcher.submit(1) }
            try await eventually("a batch is running") { gate.isHolding }
            #expect(try await batcher.submit(-1) == -1)
            gate.open()
            #expect(try await group.next() == 1)
        }
        #expect(gate.batches.withLock { $0 } == [[1], [-1]])
    }

    struct Refused: Error, Equatable {}

    @Test func aFailedBatchFailsOnlyItsOwnRequests() async throws {
        let batcher = StatementBatcher<Int, Int>(maxBatch: 10, maxRunning: 2) { batch in
            if batch.contains(13) { throw Refused() }
            return batch
        }
        await #expect(throws: Refused.self) { try await batcher.submit(13) }
        #expect(try await batcher.submit(7) == 7)
    }

    @Test func anAnswerCountThatDoesNotMatchIsAnError() async throws {
        let batcher = StatementBatcher<Int, Int>(maxBatch: 10, maxRunning: 1) { _ in [] }
        await #expect(throws: StatementBatcher<Int, Int>.AnswerCountMismatch.self) { try await batcher.submit(1) }
    }
}
