import Foundation

/// The repository's root folder (the one holding `Package.swift`), found from this file's path, wherever a test
/// file sits in the tree.
public enum RepositoryRoot {
    public static let url: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/", !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()
}
