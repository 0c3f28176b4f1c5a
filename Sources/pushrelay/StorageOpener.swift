import Foundation
import Logging
import PushRelayConfiguration
import PushRelayPostgres
import PushRelaySQLite
import PushRelayServer
import PushRelayStore

/// Where the binary chooses the storage engine: `storage.backend` names one, and this opens it with the settings of
/// `storage.*`. The server itself only ever sees the `Storage` it is given.
///
/// Errors describe themselves in one line (a bad URL naming `storage.postgres.url`, a refused connection, wrong
/// credentials, a schema this binary cannot run on, one older than it needs), without credentials; callers print them
/// as they are. With `backend: postgres` no SQLite file is created or opened; with `.check`, no SQLite file is created
/// either.
enum StorageOpener {
    /// Opens the configured engine, its schema brought to what `schema` asks (`SchemaStep`: `.upgrade` for `serve`
    /// and `migrate`, `.check` for every other command, `.finish` for `migrate --finish`). SQLite resumes a caller
    /// whose write committed on the server's event loop that submitted it (`EventLoopCallers`).
    static func open(_ settings: PushRelayConfig.Storage, schema: SchemaStep = .upgrade, logger: Logger) async throws -> Storage {
        switch settings.backend {
        case .sqlite:
            return try Storage.sqlite(path: settings.sqlitePath, schema: schema, callers: EventLoopCallers.lookup, logger: logger)
        case .postgres:
            return try await .postgres(try postgresConfiguration(settings), schema: schema, logger: logger)
        }
    }

    /// What can be checked without opening: with `backend: postgres`, that the URL parses. Every command checks it as
    /// it loads the config (`check-config` included), so a bad URL stops it at once, the key named.
    static func validate(_ settings: PushRelayConfig.Storage) throws(ConfigError) {
        if settings.backend == .postgres { _ = try postgresConfiguration(settings) }
    }

    /// Where the data is, in the engine's words: for PostgreSQL, its address without the password, with the TLS mode
    /// and pool size it uses (the URL's `sslmode` applied); otherwise `settings.location`.
    static func location(_ settings: PushRelayConfig.Storage) -> String {
        guard settings.backend == .postgres, let configuration = try? postgresConfiguration(settings) else { return settings.location }
        return "PostgreSQL \(configuration)"
    }

    /// `storage.postgres.*` as PostgreSQL's configuration: the URL parsed by the engine (`migrate-data --to` parses
    /// with it too, so its problems read the same wherever a URL is given), never with the password in the message.
    static func postgresConfiguration(_ settings: PushRelayConfig.Storage) throws(ConfigError) -> PostgresStorageConfiguration {
        guard let postgres = settings.postgres else {
            throw ConfigError(key: "storage.postgres.url", problem: "is required with storage.backend: postgres")
        }
        let tls: PostgresStorageConfiguration.TLSMode =
            switch postgres.tls {
            case .disable: .disable
            case .prefer: .prefer
            case .require: .require
            }
        do {
            return try PostgresStorageConfiguration(url: postgres.url, poolSize: postgres.poolSize, tls: tls)
        } catch {
            throw ConfigError(key: "storage.postgres.url", problem: "\(error)")
        }
    }
}
