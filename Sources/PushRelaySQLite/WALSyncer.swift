import Foundation
import GRDB
import GRDBSQLite
import PushRelayStore
import Synchronization

final class WALSyncer: WorkerThread, @unchecked Sendable {
    private var pending: [(job: WriteBatcher.Job, outcome: WriteBatcher.Outcome)] = []
    /// Set by the writer before its first commit (only read here after a commit was submitted).
    nonisolated(unsafe) var walPath: String?
    private var fd: Int32 = -1
    /// Successful syncs (incremented before the callers they cover are answered).
    let syncs = Atomic<Int>(0)

    private let faults: StorageFaultTracker

    init(faults: StorageFaultTracker) {
        self.faults = faults
        super.init(name: "pushrelay-sqlite-sync")
    }

    func submit(_ committed: [(job: WriteBatcher.Job, outcome: WriteBatcher.Outcome)]) {
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
                faults.failed(error)
                for (job, _) in batch { job.fail(error) }
            } else {
                faults.succeeded()
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
