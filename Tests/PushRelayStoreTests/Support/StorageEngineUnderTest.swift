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
        switch self {
        case .sqlite:
            let db = try PushRelayDatabase(path: TempPath.make())
            try db.migrate()
            return (.sqlite(db), { try? await db.flushAndClose() })
        case .postgres:
            let storage = try await Storage.postgres(try await PostgresTestDatabase.create().configuration(), logger: PostgresTestServer.logger)
            return (storage, { try? await storage.engine.flushAndClose() })
        }
    }
}
