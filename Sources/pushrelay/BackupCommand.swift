import ArgumentParser
import Foundation
import PushRelaySQLite
import PushRelayServer
import PushRelayStore

/// `pushrelay backup --to FILE`: a consistent online copy of the SQLite database (the server may keep running).
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the SQLite database to a new file while the server runs (restore: stop the server, put the copy in place)."
    )
    @OptionGroup var options: ConfigOption
    @Option(help: "The backup file to create (it must not exist).") var to: String

    func run() async throws {
        let config = try options.load()
        guard config.storage.backend == .sqlite else {
            throw ValidationError("backup copies the SQLite database; for PostgreSQL use pg_dump (see docs/operations.md)")
        }
        guard FileManager.default.fileExists(atPath: config.storage.sqlitePath) else {
            throw ValidationError("no database at '\(config.storage.sqlitePath)' (storage.sqlite_path)")
        }
        do {
            let db = try PushRelayDatabase(path: config.storage.sqlitePath)
            try db.backup(to: to)
            try db.close()
        } catch let error as StoreError {
            printError(error.description)
            throw ExitCode.failure
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: to)[.size] as? Int) ?? 0
        print("backed up \(config.storage.sqlitePath) to \(to) (\(size) bytes)")
    }
}
