import Logging
import PushRelayPostgres
import PushRelayStore

/// Opens the storage engine the config names (`storage.backend`), migrated to this binary's schema.
///
/// Errors describe themselves in one line (a bad URL, a refused connection, wrong credentials, a schema newer than
/// the binary), without credentials; callers print them as they are. With `backend: postgres` no SQLite file is
/// created or opened.
public enum StorageOpener {
    public static func open(_ settings: PushRelayConfig.Storage, migrate: Bool = true, logger: Logger) async throws -> Storage {
        switch settings.backend {
        case .sqlite:
            let db = try PushRelayDatabase(path: settings.sqlitePath, callers: EventLoopCallers.lookup, logger: logger)
            if migrate { try db.migrate() }
            return .sqlite(db)
        case .postgres:
            guard let postgres = settings.postgres else { throw PostgresStoreError.invalidURL("storage.postgres.url is not set") }
            return try await .postgres(postgres, migrate: migrate, logger: logger)
        }
    }
}
