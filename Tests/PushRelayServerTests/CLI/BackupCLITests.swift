import Foundation
import GRDB
import PushRelayCore
import Testing

/// `pushrelay backup --to FILE` while a server writes to the database: the copy opens, passes SQLite's integrity
/// check and holds what was accepted before it; an existing target is refused in one line.
@Suite struct BackupCLITests {
    @Test func aBackupWhileTheServerRunsIsAConsistentCopy() async throws {
        try await TestServer.with { s in
            for i in 0..<5 { #expect(try await s.android(TestServer.haBody(token: "backup:\(i)")).status == 201) }
            let target = TestServer.tempPath() + ".backup"
            let env = ["PUSHRELAY_STORAGE_SQLITE_PATH": s.dbPath]
            let r = try await CLI.run(["backup", "--to", target], env: env)
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out.contains("backed up"), "\(r.out)")

            let copy = try DatabaseQueue(path: target)
            let (check, tokens) = try await copy.read { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA integrity_check"),
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM daily_usage WHERE push_token LIKE 'backup:%'")
                )
            }
            #expect(check == "ok")
            #expect(tokens == 5)

            let again = try await CLI.run(["backup", "--to", target], env: env)
            #expect(again.status != 0)
            #expect(again.err.contains("exists already"), "\(again.err)")
            #expect(again.err.split(separator: "\n").count == 1, "one line: \(again.err)")
        }
    }
}
