import Foundation
import GRDB

extension PushRelayDatabase {
    /// Writes a consistent, compact copy of the database to `path` with SQLite's `VACUUM INTO`: safe while a server
    /// writes to the database (the copy is one read transaction's view), and the copy needs no WAL beside it.
    /// Refuses an existing `path`; a failed copy leaves no file behind.
    public func backup(to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StoreError.cannotOpen(path: path, underlying: "the backup file exists already; choose a new name")
        }
        do {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [path]) }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw StoreError.cannotOpen(path: path, underlying: "the backup failed: \(error)")
        }
    }
}
