import Foundation
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

/// `pushrelay doctor` as the binary prints it: its options' help and the lines of a passing setup.
@Suite struct DoctorCLITests {
    @Test func theAppOptionSaysWhatAMissingAppIDRoutesTo() async throws {
        let help = try await CLI.run(["doctor", "--help"])
        #expect(help.status == 0, "\(help.err)")
        let text = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("ios.companion_app_ids"), "\(help.out)")
        #expect(text.contains("only an 'apps' entry matching \"*\" routes the token"), "\(help.out)")
        #expect(!text.contains("first route"))
    }

    /// The lines `docs/operations.md` shows: the storage with its schema version, a write, the free disk.
    @Test func aPassingSetupPrintsTheStorageWithItsSchemaVersion() async throws {
        let db = TestServer.tempPath()
        let env = ["PUSHRELAY_STORAGE_SQLITE_PATH": db]
        let migrate = try await CLI.run(["migrate"], env: env)
        #expect(migrate.status == 0, "\(migrate.err)")
        let version = PushRelayDatabase.migrations.map(\.version).max() ?? 0

        let doctor = try await CLI.run(["doctor"], env: env)
        #expect(doctor.status == 0, "\(doctor.out)\(doctor.err)")
        let lines = doctor.out.split(separator: "\n").map(String.init)
        let storage = lines.filter { $0.hasPrefix("ok   storage: ") }
        #expect(storage.first?.hasSuffix(": SQLite \(db), schema version \(version)") == true, "\(doctor.out)")
        #expect(storage.contains { $0.hasPrefix("ok   storage: a write: SQLite \(db): committed") }, "\(doctor.out)")
        #expect(storage.contains { $0.hasPrefix("ok   storage: free disk: ") && $0.contains(" GiB free in ") }, "\(doctor.out)")
        #expect(lines.last == "every check passed")
    }

    /// Before the first start there is no database: the doctor says where `serve` will create it, creates nothing,
    /// and passes; a directory that cannot hold it fails with what to do.
    @Test func aFreshSetupBeforeItsFirstStartPasses() async throws {
        let db = TestServer.tempPath()
        let fresh = try await CLI.run(["doctor"], env: ["PUSHRELAY_STORAGE_SQLITE_PATH": db])
        #expect(fresh.status == 0, "\(fresh.out)\(fresh.err)")
        #expect(fresh.out.contains("ok   storage: open: SQLite \(db) does not exist yet: 'pushrelay serve' creates it"), "\(fresh.out)")
        #expect(fresh.out.split(separator: "\n").last == "every check passed", "\(fresh.out)")
        #expect(!FileManager.default.fileExists(atPath: db), "the doctor created nothing")

        let nowhere = db + "-missing/sub/test.sqlite"
        let missing = try await CLI.run(["doctor"], env: ["PUSHRELAY_STORAGE_SQLITE_PATH": nowhere])
        #expect(missing.status != 0)
        #expect(missing.out.contains("FAIL storage: open:") && missing.out.contains("is not a directory"), "\(missing.out)")
    }
}
