import Foundation
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// The storage engines the contract suite runs against. Each test opens a fresh, empty, migrated store of each engine.
/// A new engine joins the suite by adding a case here.
enum StorageEngineUnderTest: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    /// A fresh database on the test process's throwaway server (`PostgresTestServer`); skipped, with how to install
    /// PostgreSQL, where its binaries are missing (a failure under `CI=true`).
    case postgres

    static var all: [StorageEngineUnderTest] { allCases }

    var testDescription: String { rawValue }

    /// A fresh store; call `close` at the end.
    func open() async throws -> (storage: Storage, close: @Sendable () async -> Void) {
        try await freshDatabase().open()
    }

    /// A fresh, empty database of this engine, to open as often as a test likes (as a restarted process would).
    func freshDatabase() async throws -> Database {
        switch self {
        case .sqlite: .sqlite(path: TempPath.make())
        case .postgres: .postgres(try await PostgresTestDatabase.create().configuration())
        }
    }

    /// Where one engine's database lives: a SQLite file or a PostgreSQL database.
    enum Database: Sendable {
        case sqlite(path: String)
        case postgres(PostgresStorageConfiguration)

        /// A new store on the database, migrated, sharing nothing in memory with any store opened before; call
        /// `close` at the end.
        func open() async throws -> (storage: Storage, close: @Sendable () async -> Void) {
            switch self {
            case .sqlite(let path):
                let db = try PushRelayDatabase(path: path)
                try db.migrate()
                return (.sqlite(db), { try? await db.flushAndClose() })
            case .postgres(let configuration):
                let storage = try await Storage.postgres(configuration, logger: PostgresTestServer.logger)
                return (storage, { try? await storage.engine.flushAndClose() })
            }
        }
    }
}
