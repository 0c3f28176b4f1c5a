import GRDB
import Synchronization

/// Group commit: writes submitted concurrently run in one SQLite transaction, and each caller resumes only after
/// that transaction committed. One fsync serves many requests; nobody is answered before their write is durable.
///
/// Jobs share one transaction without per-job savepoints (they cost two statements each). If any job throws, the
/// whole batch rolls back and every job is run again in a transaction of its own, so a failing job fails alone.
final class WriteBatcher: Sendable {
    private enum Outcome: Sendable {
        case success(@Sendable () -> Void)
        case failure(any Error, @Sendable () -> Void)

        var completion: @Sendable () -> Void {
            switch self {
            case .success(let c), .failure(_, let c): return c
            }
        }
    }

    private struct BatchFailed: Error {}

    private struct Job: Sendable {
        /// Runs the job inside the batch transaction; returns what to do once the transaction committed.
        let run: @Sendable (Database) -> Outcome
        /// Called instead when the batch transaction itself failed.
        let fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var queue: [Job] = []
        var draining = false
    }

    private let pool: DatabasePool
    private let state = Mutex(State())
    private let batches = Atomic<Int>(0)
    private let jobs = Atomic<Int>(0)

    /// Transactions committed and jobs they carried so far (jobs / batches = how many requests share an fsync).
    var stats: (batches: Int, jobs: Int) { (batches.load(ordering: .relaxed), jobs.load(ordering: .relaxed)) }
    /// Upper bound on jobs per transaction, to keep each commit short.
    private let maxBatch: Int

    init(pool: DatabasePool, maxBatch: Int = 1024) {
        self.pool = pool
        self.maxBatch = maxBatch
    }

    /// Queues `body` for the next group-committed transaction without waiting for it (for records whose loss in a
    /// crash costs nothing that was promised to a client). `onError` hears about a failed write.
    func enqueue(_ body: @escaping @Sendable (Database) throws -> Void, onError: @escaping @Sendable (any Error) -> Void) {
        submit(Job(
            run: { db in
                do {
                    try body(db)
                    return .success {}
                } catch {
                    return .failure(error) { onError(error) }
                }
            },
            fail: onError))
    }

    /// Returns once everything queued before this call has committed.
    func flush() async throws {
        try await write { _ in }
    }

    private func submit(_ job: Job) {
        let startDrain = state.withLock { s -> Bool in
            s.queue.append(job)
            if s.draining { return false }
            s.draining = true
            return true
        }
        if startDrain {
            Task { await self.drain() }
        }
    }

    /// Runs `body` in the next group-committed transaction and returns its result after the commit.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await submit(body).value
    }

    /// Queues `body` now (so it commits after everything queued before it) and returns a ticket to await its result.
    func submit<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) -> WriteTicket<T> {
        let ticket = WriteTicket<T>()
        submit(Job(
            run: { db in
                do {
                    let value = try body(db)
                    return .success { ticket.complete(.success(value)) }
                } catch {
                    return .failure(error) { ticket.complete(.failure(error)) }
                }
            },
            fail: { error in ticket.complete(.failure(error)) }
        ))
        return ticket
    }

    private func drain() async {
        while true {
            let batch: [Job] = state.withLock { s in
                if s.queue.isEmpty {
                    s.draining = false
                    return []
                }
                let n = min(s.queue.count, maxBatch)
                let b = Array(s.queue.prefix(n))
                s.queue.removeFirst(n)
                return b
            }
            if batch.isEmpty { return }
            do {
                let outcomes = try await pool.write { db in
                    var outcomes: [Outcome] = []
                    outcomes.reserveCapacity(batch.count)
                    for job in batch {
                        let o = job.run(db)
                        if case .failure = o { throw BatchFailed() }
                        outcomes.append(o)
                    }
                    return outcomes
                }
                batches.add(1, ordering: .relaxed)
                jobs.add(batch.count, ordering: .relaxed)
                for o in outcomes { o.completion() }
            } catch is BatchFailed {
                // Rare: isolate the failing job by running each in its own transaction.
                for job in batch {
                    do {
                        let o = try await pool.write { db in
                            let o = job.run(db)
                            if case .failure(let e, _) = o { throw e }
                            return o
                        }
                        batches.add(1, ordering: .relaxed)
                        jobs.add(1, ordering: .relaxed)
                        o.completion()
                    } catch {
                        job.fail(error)
                    }
                }
            } catch {
                for j in batch { j.fail(error) }
            }
        }
    }
}

/// A write already queued in the group commit: `value` is its result once the transaction committed.
public final class WriteTicket<T: Sendable>: Sendable {
    private let state = Mutex<(result: Result<T, any Error>?, waiters: [CheckedContinuation<T, any Error>])>((nil, []))

    func complete(_ result: Result<T, any Error>) {
        let waiters = state.withLock { s -> [CheckedContinuation<T, any Error>] in
            s.result = result
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume(with: result) }
    }

    /// The write's result, after its commit.
    public var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
                let ready = state.withLock { s -> Result<T, any Error>? in
                    if let r = s.result { return r }
                    s.waiters.append(c)
                    return nil
                }
                if let ready { c.resume(with: ready) }
            }
        }
    }
}
