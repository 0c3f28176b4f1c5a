import Foundation
import PushRelayServerTestRig
import Testing

/// The binary chooses the engine and hands PostgreSQL's URL to the engine's grammar: `check-config` names the
/// database as the engine reads it, and a bad URL stops every command at once, in one line naming
/// `storage.postgres.url` and never the password. Nothing here connects to a database.
@Suite struct StorageOpenerCLITests {
    static func postgres(_ url: String, _ more: [String: String] = [:]) -> [String: String] {
        ["PUSHRELAY_STORAGE_BACKEND": "postgres", "PUSHRELAY_STORAGE_POSTGRES_URL": url].merging(more) { $1 }
    }

    @Test func checkConfigNamesTheDatabaseAsTheEngineReadsItWithoutThePassword() async throws {
        let env = Self.postgres(
            "postgres://relay:hunter2@db.example:6543/push",
            ["PUSHRELAY_STORAGE_POSTGRES_POOL_SIZE": "4", "PUSHRELAY_STORAGE_POSTGRES_TLS": "require"]
        )
        let r = try await CLI.run(["check-config"], env: env)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("  storage: PostgreSQL postgres://relay:***@db.example:6543/push (tls require, pool 4)\n"), "\(r.out)")
        #expect(!(r.out + r.err).contains("hunter2"))
        // The URL's sslmode wins over storage.postgres.tls; the port and the database have the engine's defaults.
        let defaults = try await CLI.run(["check-config"], env: Self.postgres("postgresql://relay@db.example?sslmode=disable"))
        #expect(defaults.out.contains("  storage: PostgreSQL postgres://relay@db.example:5432/relay (tls disable, pool 16)\n"), "\(defaults.out)")
    }

    @Test func aBadURLIsOneLineNamingTheKeyAndNeverThePassword() async throws {
        let env = Self.postgres("postgres://relay:hunter2@/push")
        for command in [["check-config"], ["serve"], ["migrate"]] {
            let r = try await CLI.run(command, env: env)
            #expect(r.status != 0, "\(command)")
            #expect(r.err.contains("storage.postgres.url: invalid PostgreSQL URL: it names no host"), "\(command): \(r.err)")
            #expect(!(r.out + r.err).contains("hunter2"), "\(command)")
        }
        let scheme = try await CLI.run(["check-config"], env: Self.postgres("mysql://relay:hunter2@db.example/push"))
        #expect(scheme.status != 0 && scheme.err.contains("storage.postgres.url: invalid PostgreSQL URL: the scheme is 'mysql'"), "\(scheme.err)")
        #expect(!scheme.err.contains("hunter2"))
    }
}
