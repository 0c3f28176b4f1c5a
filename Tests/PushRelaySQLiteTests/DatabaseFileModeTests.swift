import Foundation
import GRDB
import PushRelayCore
import PushRelayTestHarness
import Testing

@testable import PushRelaySQLite
@testable import PushRelayStore

/// The database holds full push tokens, webhook ids and call-device keys, so no file of it is readable by another
/// local user: the database, its `-wal` and `-shm`, and backups are mode 0600, whatever the umask (the tests' is 022,
/// under which SQLite's own default gives 0644).
@Suite struct DatabaseFileModeTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    static func write(_ db: PushRelayDatabase, token: String) async throws {
        _ = try await SQLiteFixture(database: db).reserve(token, day: UTCDay(Date()))
    }

    @Test func aNewDatabaseAndItsWALAndSharedMemoryAreOwnerOnly() async throws {
        let path = TempPath.make()
        #expect(!FileManager.default.fileExists(atPath: path))
        let db = try PushRelayDatabase(path: path)
        defer { try? db.close() }
        try db.migrate()
        try await Self.write(db, token: "file-mode-token")
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
            let mode = try Self.mode(file)
            #expect(mode == 0o600, "\(file) is \(String(mode, radix: 8))")
        }
    }

    @Test func anExistingDatabaseReadableByOthersIsMadeOwnerOnly() async throws {
        let path = TempPath.make()
        do {
            let db = try PushRelayDatabase(path: path)
            try db.migrate()
            try await Self.write(db, token: "before")
            try db.close()
        }
        #expect(chmod(path, 0o644) == 0)
        #expect(try Self.mode(path) == 0o644)

        let db = try PushRelayDatabase(path: path)
        defer { try? db.close() }
        try await Self.write(db, token: "after")
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try Self.mode(file)
            #expect(mode == 0o600, "\(file) is \(String(mode, radix: 8))")
        }
        let count = try await db.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage") }
        #expect(count == 2, "the data is kept")
    }

    /// Companions left by a process that stopped (a `-wal` and `-shm` after a crash, a rollback `-journal`) are
    /// tightened with the database.
    @Test func leftoverCompanionFilesAreMadeOwnerOnly() throws {
        let path = TempPath.make()
        let files = [path] + PushRelayDatabase.companionPaths(of: path)
        #expect(files.map { $0.replacingOccurrences(of: path, with: "") } == ["", "-wal", "-shm", "-journal"])
        for file in files {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(), attributes: [.posixPermissions: 0o644]))
            #expect(chmod(file, 0o664) == 0)
        }
        #expect(PushRelayDatabase.restrictFileModes(path: path) == [])
        for file in files { #expect(try Self.mode(file) == 0o600, "\(file)") }
        // Files that are owner-only already, or absent, are left alone.
        #expect(chmod(path + "-journal", 0o400) == 0)
        try FileManager.default.removeItem(atPath: path + "-wal")
        #expect(PushRelayDatabase.restrictFileModes(path: path) == [])
        #expect(try Self.mode(path + "-journal") == 0o400)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aBackupIsOwnerOnly() async throws {
        let path = TempPath.make()
        let db = try PushRelayDatabase(path: path)
        defer { try? db.close() }
        try db.migrate()
        try await Self.write(db, token: "backed-up")
        let target = TempPath.make(prefix: "pushrelay-backup")
        try db.backup(to: target)
        #expect(try Self.mode(target) == 0o600)
        let copy = try DatabaseQueue(path: target)
        let count = try await copy.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage WHERE push_token = 'backed-up'") }
        #expect(count == 1)
        try copy.close()

        // An existing file is refused and left as it was.
        #expect(throws: StoreError.self) { try db.backup(to: target) }
        #expect(try Self.mode(target) == 0o600)
        let kept = try DatabaseQueue(path: target)
        #expect(try await kept.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage") } == 1)
        try kept.close()
    }
}
