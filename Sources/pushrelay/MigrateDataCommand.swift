import ArgumentParser
import Foundation
import Logging
import PushRelayDataCopy
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore

/// `pushrelay migrate-data --from sqlite:PATH --to postgres:URL`: moves an existing install's data into PostgreSQL.
struct MigrateData: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-data",
        abstract: "Copy an existing SQLite install's data into a new, empty PostgreSQL database.",
        discussion: """
            Stop PushRelay first. The SQLite database must be at this build's schema version (run `pushrelay migrate` \
            on it first); it is only read. PostgreSQL gets its schema, then everything is copied in one transaction \
            (all or nothing): quotas and usage, limit overrides, dead tokens, the delivery log, API keys and devices, \
            channel tokens, push-token bindings, pending channel messages, and the Matrix retry queue and dedupe window. \
            The copy is refused when the PostgreSQL tables already hold rows.
            """
    )

    @Option(name: .long, help: ArgumentHelp("The SQLite database to read.", valueName: "sqlite:PATH"))
    var from: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The PostgreSQL database to fill (default: $PUSHRELAY_STORAGE_POSTGRES_URL).",
            valueName: "postgres:URL"
        )
    )
    var to: String?

    @Flag(name: .long, help: "Do not copy the delivery log (it can be large; it is only history).")
    var skipDeliveryLog = false

    func validate() throws {
        _ = try sqlitePath()
        _ = try postgresConfiguration()
    }

    /// `sqlite:PATH` (also `sqlite:///abs/path`).
    func sqlitePath() throws -> String {
        guard from.hasPrefix("sqlite:") else {
            throw ValidationError("--from must be sqlite:PATH (the SQLite database file), e.g. sqlite:/var/lib/pushrelay/pushrelay.sqlite")
        }
        var path = String(from.dropFirst("sqlite:".count))
        if path.hasPrefix("///") { path.removeFirst(2) }
        guard !path.isEmpty else { throw ValidationError("--from sqlite:PATH names no file") }
        return path
    }

    /// `postgres:URL` (the URL itself may be given too: `postgres://…` or `postgresql://…`), else the environment.
    func postgresConfiguration() throws -> PostgresStorageConfiguration {
        let url: String
        if let to {
            if to.hasPrefix("postgres://") || to.hasPrefix("postgresql://") {
                url = to
            } else if to.hasPrefix("postgres:") {
                url = String(to.dropFirst("postgres:".count))
            } else {
                throw ValidationError("--to must be postgres:URL, e.g. postgres:postgres://pushrelay:secret@db.example:5432/pushrelay")
            }
        } else if let env = ProcessInfo.processInfo.environment["PUSHRELAY_STORAGE_POSTGRES_URL"], !env.isEmpty {
            url = env.hasPrefix("postgres:") && !env.hasPrefix("postgres://") ? String(env.dropFirst("postgres:".count)) : env
        } else {
            throw ValidationError("no target: give --to postgres:URL or set PUSHRELAY_STORAGE_POSTGRES_URL")
        }
        do {
            // The copy is one transaction on one connection; a second one covers opening.
            return try PostgresStorageConfiguration(url: url, poolSize: 2)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let path = try sqlitePath()
        let target = try postgresConfiguration()
        let logger = makeLogger(.error)
        let report: SQLiteToPostgresCopy.Report
        do {
            report = try await SQLiteToPostgresCopy.run(
                sqlitePath: path,
                postgres: target,
                skipDeliveryLog: skipDeliveryLog,
                logger: logger
            )
        } catch {
            // One line, never a stack trace; every error here is password-free (PostgresStoreError, StoreError, the copy's).
            let line = "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
            FileHandle.standardError.write(Data("Error: migrate-data: \(line)\n".utf8))
            throw ExitCode.failure
        }
        for table in report.tables {
            print("copied \(table.rows) \(table.rows == 1 ? "row" : "rows") to \(table.table)")
        }
        for table in report.skipped {
            print("skipped \(table) (--skip-delivery-log)")
        }
        print(
            "copied \(report.totalRows) \(report.totalRows == 1 ? "row" : "rows") in \(report.tables.count) tables from \(path) to PostgreSQL at \(target.host):\(target.port)/\(target.database)"
        )
    }
}
