import Testing

@testable import PushRelayServer

/// `storage.*`: the backend, SQLite's path, and PostgreSQL's URL, pool and TLS (parsed when the backend is postgres).
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
        #expect(pg.host == "db.example" && pg.port == 6543 && pg.username == "relay" && pg.password == "hunter2" && pg.database == "push")
        #expect(pg.poolSize == 4 && pg.tls == .require)
        #expect(c.storage.location == "PostgreSQL postgres://relay:***@db.example:6543/push (tls require, pool 4)")
    }

    @Test func postgresErrorsNameTheKeyAndNeverThePassword() {
        #expect(
            configProblem(["storage": ["backend": "postgres"]])
                == "storage.postgres.url: is required with storage.backend: postgres (postgres://user:password@host:5432/database, or PUSHRELAY_STORAGE_POSTGRES_URL)"
        )
        let noHost = configProblem(["storage": ["backend": "postgres", "postgres": ["url": "postgres://relay:hunter2@/push"]]])
        #expect(noHost == "storage.postgres.url: invalid PostgreSQL URL: it names no host")
        #expect(!noHost.contains("hunter2"))
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
        #expect(sqlite.storage.postgres == nil, "with SQLite the URL is not parsed")
    }
}
