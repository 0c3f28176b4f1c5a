import Foundation
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import Testing

/// `pushrelay api-key create|list|revoke` on the real binary and database.
@Suite struct APIKeyCLITests {
    @Test func createListRevoke() async throws {
        let env = ["PUSHRELAY_STORAGE_SQLITE_PATH": TestServer.tempPath()]
        #expect(try await CLI.run(["migrate"], env: env).status == 0)
        let created = try await CLI.run(["api-key", "create", "--label", "pbx"], env: env)
        #expect(created.status == 0, "\(created.err)")
        let key = try #require(created.out.split(separator: "\n").last.map(String.init))
        #expect(key.hasPrefix("prk_") && key.count > 40)

        let list = try await CLI.run(["api-key", "list"], env: env)
        #expect(list.status == 0, "\(list.err)")
        #expect(list.out.contains("\"pbx\""))
        #expect(!list.out.contains(key), "the key is never listed")

        let database = try PushRelayDatabase(path: env["PUSHRELAY_STORAGE_SQLITE_PATH"]!)
        let store = SQLiteDeviceStore(database: database)
        let id = try #require(try await store.apiKeyID(forKey: key))
        try database.close()

        let revoke = try await CLI.run(["api-key", "revoke", String(id)], env: env)
        #expect(revoke.status == 0, "\(revoke.err)")
        #expect(try await CLI.run(["api-key", "revoke", String(id)], env: env).status != 0)
        let again = try PushRelayDatabase(path: env["PUSHRELAY_STORAGE_SQLITE_PATH"]!)
        #expect(try await SQLiteDeviceStore(database: again).apiKeyID(forKey: key) == nil)
        try again.close()
    }
}
