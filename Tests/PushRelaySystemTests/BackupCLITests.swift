import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
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

            #expect(try await SQLiteFile(path: target).strings("PRAGMA integrity_check") == ["ok"])
            let copy = try Storage.sqlite(path: target, schema: .check)
            let usage = try await copy.admin.list(day: UTCDay(s.clock.now()), top: nil)
            try await copy.engine.flushAndClose()
            #expect(usage.filter { $0.pushToken.hasPrefix("backup:") }.count == 5, "\(usage)")

            let again = try await CLI.run(["backup", "--to", target], env: env)
            #expect(again.status != 0)
            #expect(again.err.contains("exists already"), "\(again.err)")
            #expect(again.err.split(separator: "\n").count == 1, "one line: \(again.err)")
        }
    }
}
