import Foundation
import GRDB
import GRDBSQLite
import PushRelayStore
import Synchronization

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
