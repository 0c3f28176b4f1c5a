import Foundation
import GRDB
import PushRelayStore

extension PushRelayDatabase {
    /// Writes a consistent, compact copy of the database to `path` with SQLite's `VACUUM INTO`: safe while a server
    /// writes to the database (the copy is one read transaction's view), and the copy needs no WAL beside it.
    /// The copy is mode 0600 (`fileMode`), like the database. Refuses an existing `path`; a failed copy leaves no
    /// file behind.
    public func backup(to path: String) throws {
        // Created here, empty and owner-only, so that the copy never exists with SQLite's default mode (0644 less the
        // umask); VACUUM INTO writes into an empty file.
        switch createExclusiveFile(atPath: path, mode: Self.fileMode) {
        case 0: break
        case EEXIST: throw StoreError.cannotOpen(path: path, underlying: "the backup file exists already; choose a new name")
        case let failure:
            try? FileManager.default.removeItem(atPath: path)
            throw StoreError.cannotOpen(path: path, underlying: "cannot create the backup file with mode 0600: \(String(cString: strerror(failure)))")
        }
        do {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [path]) }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw StoreError.cannotOpen(path: path, underlying: "the backup failed: \(error)")
        }
    }
}
