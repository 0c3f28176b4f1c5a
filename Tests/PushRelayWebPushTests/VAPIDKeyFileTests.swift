import Foundation
import PushRelayWebPush
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A VAPID key file is its owner's only (0600) from its creation: never created with a wider mode and narrowed after,
/// and a replaced key does not keep the old file's mode.
@Suite struct VAPIDKeyFileTests {
    static func directory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func aNewKeyFileIsCreated0600() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/vapid.pem"
        let (_, pem) = VAPIDKey.generate()
        try VAPIDKeyFile.write(pem, to: path, replacing: false)
        #expect(try Self.mode(path) == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == pem)
        #expect(VAPIDKey.parse(pem) != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["vapid.pem"])
    }

    @Test func anExistingFileIsKeptUnlessReplacedAndAReplacementIs0600() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/vapid.pem"
        // An old key left readable by everyone.
        #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644]))
        #expect(throws: VAPIDKeyFile.WriteError.self) { try VAPIDKeyFile.write("new", to: path, replacing: false) }
        do {
            try VAPIDKeyFile.write("new", to: path, replacing: false)
        } catch let error as VAPIDKeyFile.WriteError {
            #expect(error.exists)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(try Self.mode(path) == 0o644)

        try VAPIDKeyFile.write("new", to: path, replacing: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        #expect(try Self.mode(path) == 0o600, "a new file, not the old one's mode")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["vapid.pem"], "no temporary file is left")
    }

    @Test func aSymbolicLinkIsNotFollowed() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let target = dir + "/elsewhere"
        try FileManager.default.createSymbolicLink(atPath: dir + "/vapid.pem", withDestinationPath: target)
        #expect(throws: VAPIDKeyFile.WriteError.self) { try VAPIDKeyFile.write("key", to: dir + "/vapid.pem", replacing: false) }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
