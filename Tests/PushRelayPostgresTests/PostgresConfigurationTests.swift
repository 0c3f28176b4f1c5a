import Foundation
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// `storage.postgres.url` parsing and the schema files (no server needed).
@Suite struct PostgresConfigurationTests {
    @Test func aURLNamesHostPortUserPasswordAndDatabase() throws {
        let c = try PostgresStorageConfiguration(url: "postgres://push%40relay:p%3Ass@db.example:6543/pushrelay", poolSize: 4, tls: .require)
        #expect(c.host == "db.example" && c.port == 6543 && c.username == "push@relay" && c.password == "p:ss")
        #expect(c.database == "pushrelay" && c.poolSize == 4 && c.tls == .require)
        let d = try PostgresStorageConfiguration(url: "postgresql://u@localhost?sslmode=disable")
        #expect(d.port == 5432 && d.database == "u" && d.password == nil && d.tls == .disable)
    }

    @Test(arguments: ["mysql://u:p@h/db", "not a url", "postgres://:p@h/db", "postgres://u:p@/db", "postgres://u:p@h/db?sslmode=maybe"])
    func aBadURLIsOneClearLine(url: String) {
        #expect {
            try PostgresStorageConfiguration(url: url)
        } throws: { error in
            let line = "\(error)"
            return line.hasPrefix("invalid PostgreSQL URL: ") && !line.contains("\n") && !line.contains(":p@")
        }
    }

    @Test func theDescriptionHidesThePassword() throws {
        let c = try PostgresStorageConfiguration(url: "postgres://u:hunter2@h:5432/db")
        #expect(!c.description.contains("hunter2") && c.description.contains("u:***@h:5432/db"))
    }

    @Test func bothEnginesShareOneSchemaVersion() {
        #expect(PostgresStorageEngine.migrations.map(\.version).max() == PushRelayDatabase.migrations.map(\.version).max())
    }

    @Test func migrationFilesAreTheEmbeddedSchema() throws {
        let dir = RepositoryRoot.url.appendingPathComponent("migrations/postgres")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sql") }.sorted()
        let embedded = PostgresStorageEngine.migrations.sorted { $0.version < $1.version }
        #expect(files.count == embedded.count, "the build embeds migrations/postgres/ (EmbedPlugin)")
        for (file, m) in zip(files, embedded) {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            #expect(file == m.name + ".sql")
            #expect(
                text.trimmingCharacters(in: .whitespacesAndNewlines) == m.sql.trimmingCharacters(in: .whitespacesAndNewlines),
                "migrations/postgres/\(file) differs from the embedded copy (EmbedPlugin)"
            )
        }
    }
}
