import Foundation
import GRDB
import GRDBSQLite
import PushRelayStore
import Synchronization

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
