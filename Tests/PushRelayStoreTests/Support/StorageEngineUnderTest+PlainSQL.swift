import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness

extension StorageEngineUnderTest {
    /// A fresh store, with a way to run plain SQL on its database outside the store (as an operator's tool, or a
    /// damaged file, would); call `close` at the end.
    func openWithPlainSQL() async throws -> (
        storage: Storage, execute: @Sendable (String) async throws -> Void, close: @Sendable () async -> Void
    ) {
        switch self {
        case .sqlite:
            let path = TempPath.make()
            let db = try PushRelayDatabase(path: path)
            try db.migrate()
            return (.sqlite(db), { try await SQLiteFile(path: path).execute($0) }, { try? await db.flushAndClose() })
        case .postgres:
            let database = try await PostgresTestDatabase.create()
            let storage = try await Storage.postgres(try database.configuration(), logger: PostgresTestServer.logger)
            return (storage, { try await database.psql($0) }, { try? await storage.engine.flushAndClose() })
        }
    }
}
