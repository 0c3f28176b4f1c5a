import Foundation
import GRDB
import GRDBSQLite
import PushRelayStore
import Synchronization

final class WriterThread: WorkerThread, @unchecked Sendable {
    private let pool: DatabasePool
    private let checkpointer: WALCheckpointer?
    private let syncer: WALSyncer
    private let maxBatch: Int
    private let faults: StorageFaultTracker
    private let began: @Sendable (Database) throws -> Void
    private let rolledBack: @Sendable () -> Void
    private var queue: [WriteBatcher.Job] = []
    private let batches = Atomic<Int>(0)
    private let jobs = Atomic<Int>(0)
    /// How many queued jobs make the waiting writer want a signal (guarded by `condition`): 1 while it waits for
    /// work, never while it runs a batch. Submitters signal only then, so the jobs queued during a commit cost no
    /// wakeup each.
    private var wakeAt = Int.max

    init(
        pool: DatabasePool,
        checkpointer: WALCheckpointer?,
        syncer: WALSyncer,
        maxBatch: Int,
        faults: StorageFaultTracker,
        hooks: (began: @Sendable (Database) throws -> Void, rolledBack: @Sendable () -> Void)
    ) {
        self.began = hooks.began
        self.rolledBack = hooks.rolledBack
        self.pool = pool
        self.checkpointer = checkpointer
        self.syncer = syncer
        self.maxBatch = maxBatch
        self.faults = faults
        super.init(name: "pushrelay-sqlite-writer")
    }

    var stats: (batches: Int, jobs: Int) { (batches.load(ordering: .relaxed), jobs.load(ordering: .relaxed)) }
    var syncs: Int { syncer.syncs.load(ordering: .acquiring) }

    func submit(_ job: WriteBatcher.Job) {
        condition.lock()
        if stopping {
            condition.unlock()
            job.fail(StorageError.closed)
            return
        }
        queue.append(job)
        if queue.count >= wakeAt {
            wakeAt = .max
            condition.signal()
        }
        startIfNeeded()
        condition.unlock()
    }

    /// Commits what is queued, then ends the sync and checkpoint threads; `stop()` lets it finish.
    override func loop() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping {
                wakeAt = 1
                condition.wait()
            }
            wakeAt = .max
            if queue.isEmpty {
                condition.unlock()
                syncer.stop()  // syncs and answers what committed last
                checkpointer?.stop()
                return
            }
            let batch: [WriteBatcher.Job]
            if queue.count <= maxBatch {
                batch = queue
                queue.removeAll(keepingCapacity: true)
            } else {
                batch = Array(queue.prefix(maxBatch))
                queue.removeFirst(maxBatch)
            }
            condition.unlock()
            run(batch)
        }
    }

    /// Runs each job's completion where it was submitted from: one `execute` per executor for the whole batch, instead
    /// of a cross-thread wakeup per request.
    static func complete(_ committed: [(job: WriteBatcher.Job, outcome: WriteBatcher.Outcome)]) {
        var byExecutor: [(executor: any WriteCallerExecutor, completions: [@Sendable () -> Void])] = []
        for (job, outcome) in committed {
            guard let executor = job.resumeOn else {
                outcome.completion()
                continue
            }
            if let i = byExecutor.firstIndex(where: { $0.executor === executor }) {
                byExecutor[i].completions.append(outcome.completion)
            } else {
                byExecutor.append((executor, [outcome.completion]))
            }
        }
        for (executor, completions) in byExecutor {
            executor.execute { for c in completions { c() } }
        }
    }

    private func run(_ batch: [WriteBatcher.Job]) {
        do {
            let (outcomes, wrote) = try transaction { db in
                if syncer.walPath == nil { syncer.walPath = Self.walPath(db) }
                let changesBefore = db.sqliteConnection.map { sqlite3_total_changes64($0) }
                try began(db)
                var outcomes: [WriteBatcher.Outcome] = []
                outcomes.reserveCapacity(batch.count)
                for job in batch {
                    let o = job.run(db)
                    if case .failure = o { throw WriteBatcher.BatchFailed() }
                    outcomes.append(o)
                }
                return (outcomes, changesBefore == nil || db.sqliteConnection.map { sqlite3_total_changes64($0) } != changesBefore)
            }
            batches.add(1, ordering: .relaxed)
            jobs.add(batch.count, ordering: .relaxed)
            if wrote {
                syncer.submit(Array(zip(batch, outcomes)))
                checkpointer?.noteCommit()
            } else {
                // Only reads (a reply's rateLimits, a flush): nothing of theirs needs the disk.
                Self.complete(Array(zip(batch, outcomes)))
            }
        } catch is WriteBatcher.BatchFailed {
            // Rare: isolate the failing job by running each in its own transaction.
            rolledBack()
            for job in batch {
                do {
                    let o = try transaction { db in
                        try began(db)
                        let o = job.run(db)
                        if case .failure(let e, _) = o { throw e }
                        return o
                    }
                    batches.add(1, ordering: .relaxed)
                    jobs.add(1, ordering: .relaxed)
                    syncer.submit([(job, o)])
                } catch {
                    rolledBack()
                    faults.failed(error)
                    job.fail(error)
                }
            }
        } catch {
            rolledBack()
            faults.failed(error)
            for j in batch { j.fail(error) }
        }
    }
}

extension WriterThread {
    /// `pool.write` with the BEGIN and COMMIT statements prepared once: GRDB's `inTransaction` parses and prepares
    /// both for every transaction, which on the notify path was ~1–1.5% of the server's CPU. The statements run
    /// through GRDB (`Statement.execute`), so its transaction bookkeeping is the same as with `inTransaction`.
    func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            let value: T
            do {
                value = try body(db)
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                if db.isInsideTransaction { try? db.rollback() }
                throw error
            }
            return value
        }
    }

    /// The WAL file SQLite uses for the connection's main database (symbolic links resolved as SQLite does).
    static func walPath(_ db: Database) -> String? {
        guard let connection = db.sqliteConnection, let main = sqlite3_db_filename(connection, "main"),
            let wal = sqlite3_filename_wal(main)
        else { return nil }
        return String(cString: wal)
    }
}

/// The second half of the group commit: fdatasyncs the WAL, then answers the callers of every transaction committed
/// before the sync (one sync for as many batches as committed meanwhile). State is guarded by `condition`.
