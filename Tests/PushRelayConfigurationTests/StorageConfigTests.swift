import PushRelayConfiguration
import Testing

/// `storage.*`: the backend, SQLite's path, and PostgreSQL's URL, pool and TLS (read when the backend is postgres; the
/// URL's grammar is the engine's, checked by the binary: `StorageOpenerCLITests`).
@Suite struct StorageConfigTests {
    @Test func sqliteIsTheDefault() throws {
        let s = try PushRelayConfig.load(file: nil, environment: [:]).storage
        #expect(s.backend == .sqlite && s.sqlitePath == "./pushrelay.sqlite" && s.postgres == nil)
        #expect(s.location == "SQLite ./pushrelay.sqlite")
        let set = try PushRelayConfig.Storage(reading: ConfigTreeReader(tree: ["storage": ["sqlite_path": "/var/lib/pushrelay/db.sqlite"]]))
        #expect(set.location == "SQLite /var/lib/pushrelay/db.sqlite")
        #expect(configProblem(["storage": ["sqlite_path": ""]]) == "storage.sqlite_path: must not be empty")
        #expect(configProblem(["storage": ["backend": "mysql"]]) == "storage.backend: must be one of sqlite, postgres (got 'mysql')")
    }

    @Test func postgresIsReadFromTheEnvironmentAndNamedWithoutItsPassword() throws {
        let c = try PushRelayConfig.load(
            file: nil,
            environment: [
                "PUSHRELAY_STORAGE_BACKEND": "postgres", "PUSHRELAY_STORAGE_POSTGRES_URL": "postgres://relay:hunter2@db.example:6543/push",
                "PUSHRELAY_STORAGE_POSTGRES_POOL_SIZE": "4", "PUSHRELAY_STORAGE_POSTGRES_TLS": "require",
            ]
        )
        let pg = try #require(c.storage.postgres)
        #expect(pg == .init(url: "postgres://relay:hunter2@db.example:6543/push", poolSize: 4, tls: .require))
        #expect(c.storage.location == "PostgreSQL postgres://relay:***@db.example:6543/push")
    }

    /// What logs and checks show of a URL: never its password, nor its query (where a driver's parameters could carry
    /// one), and nothing of a URL whose host cannot be read.
    @Test func theShownURLHidesThePasswordWhateverIsWritten() {
        func shown(_ url: String) -> String { PushRelayConfig.Storage.Postgres(url: url).redactedURL }
        #expect(shown("postgres://relay:hunter2@db.example:6543/push") == "postgres://relay:***@db.example:6543/push")
        #expect(shown("postgresql://relay@db.example/push") == "postgresql://relay@db.example/push")
        #expect(shown("postgres://relay:hunter2@db.example/push?sslmode=require&password=hunter2") == "postgres://relay:***@db.example/push")
        for unreadable in ["postgres://relay:hunter2@/push", "postgres:relay:hunter2@db.example/push", "not a url hunter2", ""] {
            #expect(shown(unreadable) == "(storage.postgres.url unreadable)", "\(unreadable)")
        }
    }

    @Test func postgresErrorsNameTheKeyAndNeverThePassword() {
        #expect(
            configProblem(["storage": ["backend": "postgres"]])
                == "storage.postgres.url: is required with storage.backend: postgres (postgres://user:password@host:5432/database, or PUSHRELAY_STORAGE_POSTGRES_URL)"
        )
        #expect(
            configProblem(["storage": ["backend": "postgres", "postgres": ["url": "postgres://u@h/d", "tls": "maybe"]]])
                == "storage.postgres.tls: must be one of disable, prefer, require (got 'maybe')"
        )
        #expect(
            configProblem(["storage": ["backend": "postgres", "postgres": ["url": "postgres://u@h/d", "pool_size": 0]]])
                == "storage.postgres.pool_size: must be a whole number from 1 to 1000; got 0"
        )
    }

    @Test func thePostgresSectionIsCheckedForUnknownKeysOnEveryBackend() throws {
        #expect(
            configProblem(["storage": ["postgres": ["host": "db"]]]) == "storage.postgres.host: unknown key (known: pool_size, tls, url)"
        )
        let sqlite = try PushRelayConfig(tree: ["storage": ["postgres": ["url": "not a url"]]])
        #expect(sqlite.storage.postgres == nil, "with SQLite the section is not read")
    }
}
