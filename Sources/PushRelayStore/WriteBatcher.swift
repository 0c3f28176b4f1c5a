import GRDB
import Synchronization

/// Group commit: writes submitted concurrently run in one SQLite transaction, and each caller resumes only after
/// that transaction committed. One fsync serves many requests; nobody is answered before their write is durable.
///
/// Each job runs inside its own savepoint, so a job that throws rolls back alone and the others still commit.
final class WriteBatcher: Sendable {
    private struct Job: Sendable {
        /// Runs the job inside the batch transaction; returns what to do once the transaction committed.
        let run: @Sendable (Database) -> @Sendable () -> Void
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

    /// Runs `body` in the next group-committed transaction and returns its result after the commit.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (cont: CheckedContinuation<T, any Error>) in
            let job = Job(
                run: { db in
                    do {
                        let value = try db.inSavepointReturning { try body(db) }
                        return { cont.resume(returning: value) }
                    } catch {
                        return { cont.resume(throwing: error) }
                    }
                },
                fail: { error in cont.resume(throwing: error) }
            )
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
                let completions = try await pool.write { db in batch.map { $0.run(db) } }
                batches.add(1, ordering: .relaxed)
                jobs.add(batch.count, ordering: .relaxed)
                for c in completions { c() }
            } catch {
                for j in batch { j.fail(error) }
            }
        }
    }
}

extension Database {
    /// Runs `body` in a savepoint, rolling back only this savepoint when it throws.
    func inSavepointReturning<T>(_ body: () throws -> T) throws -> T {
        var result: T?
        try inSavepoint {
            result = try body()
            return .commit
        }
        return result!
    }
}
