import Foundation
import PushRelayCore

/// Paths for a test's files, each in a new directory of its own under the system's temporary directory. The
/// directories are removed when the test process exits, so repeated runs do not fill the temporary directory (tens of
/// thousands of entries there make every file creation in it slower).
public enum TempPath {
    /// A path for a new SQLite file (`test.sqlite`) in a new directory named `<prefix>-<UUID>`.
    public static func make(prefix: String = "pushrelay-tests") -> String {
        directory(prefix: prefix) + "/test.sqlite"
    }

    /// A new empty directory named `<prefix>-<UUID>`, removed at exit.
    public static func directory(prefix: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        created.withLock { state in
            if !state.registered {
                state.registered = true
                atexit { TempPath.removeAll() }
            }
            state.paths.append(dir)
        }
        return dir
    }

    private struct Created {
        var registered = false
        var paths: [String] = []
    }

    private static let created = Locked(Created())

    private static func removeAll() {
        let paths = created.withLock { state in
            defer { state.paths = [] }
            return state.paths
        }
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }
}
