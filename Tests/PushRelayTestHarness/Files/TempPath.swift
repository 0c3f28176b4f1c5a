import Foundation

/// Paths for a test's files, each in a new directory of its own under the system's temporary directory.
public enum TempPath {
    /// A path for a new SQLite file (`test.sqlite`) in a new directory named `<prefix>-<UUID>`.
    public static func make(prefix: String = "pushrelay-tests") -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("test.sqlite").path
    }
}
