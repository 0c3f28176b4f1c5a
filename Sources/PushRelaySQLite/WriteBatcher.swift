import Foundation
import GRDB
import GRDBSQLite
import PushRelayStore
import Synchronization

/// Group commit: writes submitted concurrently run in one SQLite transaction, and each caller resumes only after
/// that transaction committed and the WAL holding it was synced to disk. One fsync serves many requests; nobody is
/// answered before their write is durable.
///
/// The sync is pipelined: the writer connection runs `synchronous = NORMAL`, so a commit only writes the WAL, and a
/// second thread (`WALSyncer`) fdatasyncs the WAL and then releases the callers of every transaction committed before
/// that sync, while the writer already runs the next batch. That is the durability of `synchronous = FULL` (a WAL
/// frame is recoverable once synced, and frames are only valid in order, behind their checksums) without the writer
/// waiting for the disk.
///
/// The transactions run on a dedicated writer thread that owns the loop: it takes everything queued, runs it in one
/// transaction with GRDB's synchronous API (blocking is this thread's job), commits, resumes the waiting callers and
/// goes round again. (A Swift task would put every commit behind request work on the server's threads.)
///
/// Jobs share one transaction without per-job savepoints (they cost two statements each). If any job throws, the
/// whole batch rolls back and every job is run again in a transaction of its own, so a failing job fails alone.
final class WriteBatcher: Sendable {
    enum Outcome: Sendable {
        case success(@Sendable () -> Void)
        case failure(any Error, @Sendable () -> Void)

        var completion: @Sendable () -> Void {
            switch self {
            case .success(let c), .failure(_, let c): return c
            }
        }
    }

    struct BatchFailed: Error {}

    struct Job: Sendable {
        /// Runs the job inside the batch transaction; returns what to do once the transaction committed.
        let run: @Sendable (Database) -> Outcome
        /// Called instead when the batch transaction itself failed.
        let fail: @Sendable (any Error) -> Void
        /// Where the submitter is resumed (nil for fire-and-forget writes and callers off the server's threads): its
        /// completion runs there, with the batch's other completions for that executor.
        var resumeOn: (any WriteCallerExecutor)? = nil
    }

    private let writer: WriterThread
    private let callers: WriteCallerExecutor.Lookup
    /// Whether writes are going through (`StorageHealth`), from the outcomes of the commits and syncs.
    let faults = StorageFaultTracker()

    /// Transactions committed and jobs they carried so far (jobs / batches = how many requests share a commit).
    var stats: (batches: Int, jobs: Int) { writer.stats }

    /// WAL syncs so far; a caller is answered only after a sync that followed its commit.
    var syncs: Int { writer.syncs }

    /// For state kept beside the database for the writer (UsageLedger): `began` runs first in every transaction, and
    /// `rolledBack` on the writer thread after any transaction that did not commit.
    /// `callers` says where the current caller wants to be resumed (`WriteCallerExecutor`).
    init(
        pool: DatabasePool,
        checkpointer: WALCheckpointer? = nil,
        maxBatch: Int = 1024,
        callers: @escaping WriteCallerExecutor.Lookup = { nil },
        began: @escaping @Sendable (Database) throws -> Void = { _ in },
        rolledBack: @escaping @Sendable () -> Void = {}
    ) {
        self.callers = callers
        writer = WriterThread(
            pool: pool,
            checkpointer: checkpointer,
            syncer: WALSyncer(faults: faults),
            maxBatch: maxBatch,
            faults: faults,
            hooks: (began, rolledBack)
        )
    }

    deinit {
        writer.stop()
    }

    /// Queues `body` for the next group-committed transaction without waiting for it (for records whose loss in a
    /// crash costs nothing that was promised to a client). `onError` hears about a failed write.
    func enqueue(_ body: @escaping @Sendable (Database) throws -> Void, onError: @escaping @Sendable (any Error) -> Void) {
        writer.submit(
            Job(
                run: { db in
                    do {
                        try body(db)
                        return .success {}
                    } catch {
                        return .failure(error) { onError(error) }
                    }
                },
                fail: onError
            )
        )
    }

    /// Returns once everything queued before this call has committed.
    func flush() async throws {
        try await write { _ in }
    }

    /// Commits what is queued, then ends the writer thread; later writes fail with `StorageError.closed`.
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
        writer.submit(
            Job(
                run: { db in
                    do {
                        let value = try body(db)
                        return .success { ticket.complete(.success(value)) }
                    } catch {
                        return .failure(error) { ticket.complete(.failure(error)) }
                    }
                },
                fail: { error in ticket.complete(.failure(error)) },
                resumeOn: callers()
            )
        )
        return ticket
    }
}

/// The thread that runs the group-commit loop. State is guarded by `condition`.
