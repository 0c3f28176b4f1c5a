import Foundation
import Synchronization

/// Foundation's `Process.run()` is not safe to call from several threads at once on Linux: with tests spawning the
/// CLI and Python in parallel it crashed inside its own memcpy. Every test spawn goes through this lock.
enum ProcessSpawn {
    private static let lock = Mutex(())

    static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
