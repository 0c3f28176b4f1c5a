import Foundation
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

/// Only `serve` and `migrate` change the schema: every other command refuses a database it would have to migrate, in
/// one line naming the command that does, and leaves it as it was.
@Suite struct SchemaCLITests {
    @Test func aCommandThatDoesNotMigrateRefusesAnOlderSchemaAndChangesNothing() async throws {
        let path = TestServer.tempPath()
        let env = ["PUSHRELAY_STORAGE_SQLITE_PATH": path]
        let known = PushRelayDatabase.migrations.map(\.version).max() ?? 0

        // No database yet: nothing is created.
        let none = try await CLI.run(["quota", "list"], env: env)
        #expect(none.status != 0)
        #expect(none.err.contains("pushrelay migrate") && none.err.split(separator: "\n").count == 1, "\(none.err)")
        #expect(!FileManager.default.fileExists(atPath: path))

        // A database an older PushRelay left.
        let older = try PushRelayDatabase(path: path)
        try older.migrate(Array(PushRelayDatabase.migrations.dropLast()))
        try older.close()
        for command in [["quota", "list"], ["api-key", "list"], ["channel-token", "list"], ["doctor"]] {
            let run = try await CLI.run(command, env: env)
            #expect(run.status != 0, "\(command)")
            let text = run.err + run.out
            #expect(text.contains("schema is at version \(known - 1) and this PushRelay needs \(known)"), "\(command): \(text)")
            #expect(text.contains("pushrelay migrate"), "\(command): \(text)")
        }
        let unchanged = try PushRelayDatabase(path: path)
        #expect(try unchanged.appliedMigrations().last?.version == known - 1)
        try unchanged.close()

        let migrate = try await CLI.run(["migrate"], env: env)
        #expect(migrate.status == 0, "\(migrate.err)")
        #expect(migrate.out.contains("schema version \(known)"), "\(migrate.out)")
        #expect(try await CLI.run(["quota", "list"], env: env).status == 0)
        // Nothing is pending for --finish: it prints the version as migrate does.
        let finish = try await CLI.run(["migrate", "--finish"], env: env)
        #expect(finish.status == 0 && finish.out.contains("schema version \(known)"), "\(finish.err)")
    }

    /// An operator reads every line `migrate` prints as something to act on: against PostgreSQL, a successful run
    /// prints its result and nothing from the connection pool closing behind it.
    @Test func migrateFinishAgainstPostgreSQLEndsQuietly() async throws {
        let pg = try await PostgresTestDatabase.create()
        let env = ["PUSHRELAY_STORAGE_BACKEND": "postgres", "PUSHRELAY_STORAGE_POSTGRES_URL": pg.url]
        for arguments in [["migrate"], ["migrate", "--finish"], ["migrate", "--finish"]] {
            let run = try await CLI.run(arguments, env: env)
            #expect(run.status == 0, "\(arguments): \(run.err)")
            #expect(run.out.contains("schema version"), "\(run.out)")
            #expect(!run.err.contains("Connection creation failed") && !run.err.contains("clientClosedConnection"), "\(arguments): \(run.err)")
        }
        try await pg.drop()
    }
}
