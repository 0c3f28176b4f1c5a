import Foundation
import Logging
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore

/// Opens the storage engine the config names (`storage.backend`), its schema brought to what `schema` asks
/// (`SchemaStep`: `.upgrade` for `serve` and `migrate`, `.check` for every other command, `.finish` for
/// `migrate --finish`).
///
/// Errors describe themselves in one line (a bad URL, a refused connection, wrong credentials, a schema this binary
/// cannot run on, one older than it needs), without credentials; callers print them as they are. With
/// `backend: postgres` no SQLite file is created or opened; with `.check`, no SQLite file is created either.
public enum StorageOpener {
    public static func open(_ settings: PushRelayConfig.Storage, schema: SchemaStep = .upgrade, logger: Logger) async throws -> Storage {
        switch settings.backend {
        case .sqlite:
            if schema == .check, !FileManager.default.fileExists(atPath: settings.sqlitePath) {
                throw StoreError.cannotOpen(
                    path: settings.sqlitePath,
                    underlying: "there is no database there yet: 'pushrelay migrate' or 'pushrelay serve' creates it (or set storage.sqlite_path)"
                )
            }
            let db = try PushRelayDatabase(path: settings.sqlitePath, callers: EventLoopCallers.lookup, logger: logger)
            do {
                try db.migrate(step: schema)
            } catch {
                try? db.close()
                throw error
            }
            return .sqlite(db)
        case .postgres:
            guard let postgres = settings.postgres else { throw PostgresStoreError.invalidURL("storage.postgres.url is not set") }
            return try await .postgres(postgres, schema: schema, logger: logger)
        }
    }
}
