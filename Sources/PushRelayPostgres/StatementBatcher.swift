import PushRelayCore

/// Calls that arrive together, answered by one statement: one pooled round trip (and at most one commit) for the
/// whole batch instead of one each.
///
/// No timer: an idle batcher sends a lone request at once. Batches form only while earlier ones are running, at most
/// `maxRunning` at a time, so under load a request waits for at most the batches ahead of it, and alone it waits for
/// nothing. Requests leave in arrival order. With `conflictKey`, a batch never holds two requests with the same key
/// (for a statement that cannot touch a row twice): a later one waits for a later batch. A request that fails
/// `batchable` (one whose error must stay its own, such as a string PostgreSQL cannot hold) runs at once in a batch
/// of its own.
///
/// `run` gets the batch and returns one answer per request, in the batch's order. When it throws, every request of
/// the batch fails with that error (nothing is retried: the statement may have committed before its answer was lost).
final class StatementBatcher<Request: Sendable, Answer: Sendable>: Sendable {
    typealias Run = @Sendable ([Request]) async throws -> [Answer]

    /// `run` answered a batch with the wrong number of answers: a bug in `run`, never a storage fault.
    struct AnswerCountMismatch: Error, CustomStringConvertible {
        var requests: Int
        var answers: Int
        var description: String { "a batch of \(requests) requests got \(answers) answers" }
    }

    private struct Waiter {
        var request: Request
        var continuation: CheckedContinuation<Result<Answer, any Error>, Never>
    }

    private struct State {
        var pending: [Waiter] = []
        var running = 0
    }

    private let maxBatch: Int
    private let maxRunning: Int
    private let conflictKey: (@Sendable (Request) -> String)?
    private let batchable: @Sendable (Request) -> Bool
    private let run: Run
    private let state = Locked(State())

    init(
        maxBatch: Int,
        maxRunning: Int,
        conflictKey: (@Sendable (Request) -> String)? = nil,
        batchable: @escaping @Sendable (Request) -> Bool = { _ in true },
        run: @escaping Run
    ) {
        self.maxBatch = max(1, maxBatch)
        self.maxRunning = max(1, maxRunning)
        self.conflictKey = conflictKey
        self.batchable = batchable
        self.run = run
    }

    /// Requests waiting for a batch (not those in running batches).
    var waiting: Int { state.withLock { $0.pending.count } }

    /// The answer to `request`, from the batch it joins.
    func submit(_ request: Request) async throws -> Answer {
        guard batchable(request) else { return try await answers(for: [request])[0] }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Answer, any Error>, Never>) in
            let start = state.withLock { s -> Bool in
                s.pending.append(Waiter(request: request, continuation: continuation))
                guard s.running < maxRunning else { return false }
                s.running += 1
                return true
            }
            if start { Task { await self.drain() } }
        }
        return try result.get()
    }

    /// Sends batches until nothing is pending.
    private func drain() async {
        while true {
            let batch = state.withLock { s -> [Waiter] in
                let taken = take(from: &s.pending)
                if taken.isEmpty { s.running -= 1 }
                return taken
            }
            guard !batch.isEmpty else { return }
            do {
                let answers = try await answers(for: batch.map(\.request))
                for (waiter, answer) in zip(batch, answers) { waiter.continuation.resume(returning: .success(answer)) }
            } catch {
                for waiter in batch { waiter.continuation.resume(returning: .failure(error)) }
            }
        }
    }

    /// `run` for `requests`, checked to answer each one.
    private func answers(for requests: [Request]) async throws -> [Answer] {
        let answers = try await run(requests)
        guard answers.count == requests.count else { throw AnswerCountMismatch(requests: requests.count, answers: answers.count) }
        return answers
    }

    /// The next batch: the oldest pending requests, at most `maxBatch`, skipping any whose key is taken already.
    private func take(from pending: inout [Waiter]) -> [Waiter] {
        guard let conflictKey else {
            let taken = Array(pending.prefix(maxBatch))
            pending.removeFirst(taken.count)
            return taken
        }
        var keys = Set<String>()
        var taken: [Waiter] = []
        var rest: [Waiter] = []
        for waiter in pending {
            if taken.count < maxBatch, keys.insert(conflictKey(waiter.request)).inserted {
                taken.append(waiter)
            } else {
                rest.append(waiter)
            }
        }
        pending = rest
        return taken
    }
}
