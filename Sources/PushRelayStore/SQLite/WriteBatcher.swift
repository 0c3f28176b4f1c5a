import Foundation
import GRDB
import GRDBSQLite
import NIOCore
import NIOPosix
import Synchronization

/// Group commit: writes submitted concurrently run in one SQLite transaction, and each caller resumes only after
/// that transaction committed and the WAL holding it was synced to disk. One fsync serves many requests; nobody is
/// answered before their write is durable.
///
/// The sync is pipelined: the writer connection runs `synchronous = NORMAL`, so a commit only writes the WAL, and a
/// second thread (`WALSyncer`) fdatasyncs the WAL and then releases the callers of every transaction committed before
/// that sync, while the writer already runs the next batch. That is the durability of `synchronous = FULL` (a WAL
/// frame is recoverable once synced, and frames are only valid in order, behind their checksums) without the writer
/// waiting for the disk: measured on the notify path, FULL left the writer blocked in fdatasync for most of each
/// cycle.
///
/// The transactions run on a dedicated writer thread that owns the loop: it takes everything queued, runs it in one
/// transaction with GRDB's synchronous API (blocking is this thread's job), commits, resumes the waiting callers and
/// goes round again. Running the loop as a Swift task instead put every commit behind request work on the event
/// loops and cost a thread hop per batch; measured, the queue wait was three times the transaction itself.
///
/// Jobs share one transaction without per-job savepoints (they cost two statements each). If any job throws, the
/// whole batch rolls back and every job is run again in a transaction of its own, so a failing job fails alone.
final class WriteBatcher: Sendable {
    fileprivate enum Outcome: Sendable {
        case success(@Sendable () -> Void)
        case failure(any Error, @Sendable () -> Void)

        var completion: @Sendable () -> Void {
            switch self {
            case .success(let c), .failure(_, let c): return c
            }
        }
    }

    fileprivate struct BatchFailed: Error {}

    fileprivate struct Job: Sendable {
        /// Runs the job inside the batch transaction; returns what to do once the transaction committed.
        let run: @Sendable (Database) -> Outcome
        /// Called instead when the batch transaction itself failed.
        let fail: @Sendable (any Error) -> Void
        /// The event loop the submitter runs on (nil for fire-and-forget writes and callers off the loops): its
        /// completion runs there, with the batch's other completions for that loop.
        var loop: (any EventLoop)? = nil
    }

    private let writer: WriterThread

    /// Transactions committed and jobs they carried so far (jobs / batches = how many requests share a commit).
    var stats: (batches: Int, jobs: Int) { writer.stats }

    /// WAL syncs so far; a caller is answered only after a sync that followed its commit.
    var syncs: Int { writer.syncs }

    /// For state kept beside the database for the writer (UsageLedger): `began` runs first in every transaction, and
    /// `rolledBack` on the writer thread after any transaction that did not commit.
    init(pool: DatabasePool, checkpointer: WALCheckpointer? = nil, maxBatch: Int = 1024,
         began: @escaping @Sendable (Database) throws -> Void = { _ in }, rolledBack: @escaping @Sendable () -> Void = {}) {
        writer = WriterThread(pool: pool, checkpointer: checkpointer, syncer: WALSyncer(), maxBatch: maxBatch, hooks: (began, rolledBack))
    }

    deinit {
        writer.stop()
    }

    /// Queues `body` for the next group-committed transaction without waiting for it (for records whose loss in a
    /// crash costs nothing that was promised to a client). `onError` hears about a failed write.
    func enqueue(_ body: @escaping @Sendable (Database) throws -> Void, onError: @escaping @Sendable (any Error) -> Void) {
        writer.submit(Job(
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

    /// Commits what is queued, then ends the writer thread; later writes fail with `StoreError.closed`.
    func stop() {
        writer.stop()
    }

    /// Runs `body` in the next group-committed transaction and returns its result after the commit.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await submit(body).value
    }

    /// Queues `body` now (so it commits after everything queued before it) and returns a ticket to await its result.
    func submit<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) -> WriteTicket<T> {
        let ticket = WriteTicket<T>()
        writer.submit(Job(
            run: { db in
                do {
                    let value = try body(db)
                    return .success { ticket.complete(.success(value)) }
                } catch {
                    return .failure(error) { ticket.complete(.failure(error)) }
                }
            },
            fail: { error in ticket.complete(.failure(error)) },
            loop: MultiThreadedEventLoopGroup.currentEventLoop
        ))
        return ticket
    }
}

/// The thread that runs the group-commit loop. State is guarded by `condition`.
private final class WriterThread: WorkerThread, @unchecked Sendable {
    private let pool: DatabasePool
    private let checkpointer: WALCheckpointer?
    private let syncer: WALSyncer
    private let maxBatch: Int
    private let began: @Sendable (Database) throws -> Void
    private let rolledBack: @Sendable () -> Void
    private var queue: [WriteBatcher.Job] = []
    private let batches = Atomic<Int>(0)
    private let jobs = Atomic<Int>(0)
    /// How many queued jobs make the waiting writer want a signal (guarded by `condition`): 1 while it waits for
    /// work, never while it runs a batch. Submitters signal only then, so the jobs queued during a commit cost no
    /// wakeup each.
    private var wakeAt = Int.max

    init(pool: DatabasePool, checkpointer: WALCheckpointer?, syncer: WALSyncer, maxBatch: Int,
         hooks: (began: @Sendable (Database) throws -> Void, rolledBack: @Sendable () -> Void)) {
        self.began = hooks.began
        self.rolledBack = hooks.rolledBack
        self.pool = pool
        self.checkpointer = checkpointer
        self.syncer = syncer
        self.maxBatch = maxBatch
        super.init(name: "pushrelay-sqlite-writer")
    }

    var stats: (batches: Int, jobs: Int) { (batches.load(ordering: .relaxed), jobs.load(ordering: .relaxed)) }
    var syncs: Int { syncer.syncs.load(ordering: .acquiring) }

    func submit(_ job: WriteBatcher.Job) {
        condition.lock()
        if stopping {
            condition.unlock()
            job.fail(StoreError.closed)
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

    /// Runs each job's completion on the event loop it was submitted from: one `execute` per loop for the whole
    /// batch. Resuming every waiting request from this thread cost a cross-thread wakeup per request, and left the
    /// request to continue on whichever loop came next (then hop again to write its response).
    static func complete(_ committed: [(job: WriteBatcher.Job, outcome: WriteBatcher.Outcome)]) {
        var byLoop: [(loop: any EventLoop, completions: [@Sendable () -> Void])] = []
        for (job, outcome) in committed {
            guard let loop = job.loop else {
                outcome.completion()
                continue
            }
            if let i = byLoop.firstIndex(where: { $0.loop === loop }) {
                byLoop[i].completions.append(outcome.completion)
            } else {
                byLoop.append((loop, [outcome.completion]))
            }
        }
        for (loop, completions) in byLoop {
            loop.execute { for c in completions { c() } }
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
                    job.fail(error)
                }
            }
        } catch {
            rolledBack()
            for j in batch { j.fail(error) }
        }
    }
}

extension WriterThread {
    /// `pool.write` with the BEGIN and COMMIT statements prepared once: GRDB's `inTransaction` parses and prepares
    /// both for every transaction, which on the notify path was ~1–1.5% of the server's CPU. The statements run
    /// through GRDB (`Statement.execute`), so its transaction bookkeeping is the same as with `inTransaction`.
    fileprivate func transaction<T>(_ body: (Database) throws -> T) throws -> T {
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
              let wal = sqlite3_filename_wal(main) else { return nil }
        return String(cString: wal)
    }
}

/// The second half of the group commit: fdatasyncs the WAL, then answers the callers of every transaction committed
/// before the sync (one sync for as many batches as committed meanwhile). State is guarded by `condition`.
fileprivate final class WALSyncer: WorkerThread, @unchecked Sendable {
    private var pending: [(job: WriteBatcher.Job, outcome: WriteBatcher.Outcome)] = []
    /// Set by the writer before its first commit (only read here after a commit was submitted).
    nonisolated(unsafe) var walPath: String?
    private var fd: Int32 = -1
    /// Successful syncs (incremented before the callers they cover are answered).
    let syncs = Atomic<Int>(0)

    init() {
        super.init(name: "pushrelay-sqlite-sync")
    }

    fileprivate func submit(_ committed: [(job: WriteBatcher.Job, outcome: WriteBatcher.Outcome)]) {
        condition.lock()
        let wasEmpty = pending.isEmpty
        pending.append(contentsOf: committed)
        startIfNeeded()
        if wasEmpty { condition.signal() }
        condition.unlock()
    }

    /// Syncs and answers what is pending, then ends the thread.
    override func stop() {
        super.stop()
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    override func loop() {
        while true {
            condition.lock()
            while pending.isEmpty && !stopping { condition.wait() }
            if pending.isEmpty {
                condition.unlock()
                return
            }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            condition.unlock()
            if let error = sync() {
                // The transactions committed, but whether they reached the disk is unknown: their callers get the
                // error (a 503 for a notification), never a success that might not survive a crash.
                for (job, _) in batch { job.fail(error) }
            } else {
                syncs.add(1, ordering: .releasing)
                WriterThread.complete(batch)
            }
        }
    }

    private func sync() -> StoreError? {
        guard let path = walPath else { return .syncFailed(path: "(unknown)", underlying: "SQLite reported no WAL file") }
        if fd < 0 {
            // The same file for the pool's life: SQLite deletes the WAL only when its last connection closes.
            fd = open(path, O_RDWR | O_CLOEXEC)
            if fd < 0 { return .syncFailed(path: path, underlying: String(cString: strerror(errno))) }
        }
        while fdatasync(fd) != 0 {
            if errno != EINTR { return .syncFailed(path: path, underlying: String(cString: strerror(errno))) }
        }
        return nil
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

/// Copies the WAL back into the database file from a connection and thread of its own, a few times a second while
/// writes happen. A PASSIVE checkpoint never blocks the writer, so commits stay short; SQLite's automatic checkpoint
/// ran inside a commit and held up every request of that batch (p99 14 ms → 9 ms without it, measured).
final class WALCheckpointer: WorkerThread, @unchecked Sendable {
    /// SQLite's own automatic checkpoint, kept as a backstop should this thread fall far behind (~40 MB of WAL).
    static let backstopPages = 10_000
    /// How often, at most, a checkpoint runs while writes keep coming.
    static let interval: TimeInterval = 0.05

    private let path: String
    private var dirty = false

    init(path: String) {
        self.path = path
        super.init(name: "pushrelay-sqlite-checkpoint")
    }

    /// Called by the writer after each commit.
    func noteCommit() {
        condition.lock()
        dirty = true
        if !stopping { startIfNeeded() }
        condition.unlock()
    }

    /// Checkpoints while there are commits, until `stop()` (the final checkpoint is the database's close).
    override func loop() {
        var config = Configuration()
        config.label = "pushrelay-checkpoint"
        let queue = try? DatabaseQueue(path: path, configuration: config)
        while true {
            condition.lock()
            _ = condition.wait(until: Date(timeIntervalSinceNow: Self.interval))
            if stopping {
                condition.unlock()
                try? queue?.close()
                return
            }
            let run = dirty
            dirty = false
            condition.unlock()
            if run, let queue {
                _ = try? queue.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            }
        }
    }
}

/// A thread started on first use and ended by `stop()`, with the state its subclass guards by `condition`: the group
/// commit's writer, WAL syncer and checkpointer each run one.
class WorkerThread: @unchecked Sendable {
    let condition = NSCondition()
    /// Set by `stop()`; `loop()` returns once it sees it and its work is done (guarded by `condition`).
    var stopping = false
    private var started = false
    private var finished = false
    private var thread: Thread?
    private let name: String

    init(name: String) {
        self.name = name
    }

    /// The thread's body, overridden by each worker.
    func loop() {}

    /// Starts the thread unless it was started. Call with `condition` locked.
    func startIfNeeded() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in
            loop()
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    /// Sets `stopping` and waits until `loop()` returned. On the thread itself (a job there dropped the last
    /// reference to its owner), it does not wait: the loop ends on its own.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let onThread = thread.map { $0 === Thread.current } ?? false
        while started && !finished && !onThread { condition.wait() }
        condition.unlock()
    }
}
