import PushRelayConfiguration
import Testing

/// `admin.token`.
@Suite struct AdminConfigTests {
    @Test func aTokenOfAtLeast16CharactersEnablesTheAdminAPI() throws {
        func token(_ value: String?) throws -> String? {
            try PushRelayConfig.adminToken(reading: ConfigTreeReader(tree: value.map { ["admin": ["token": .string($0)]] } ?? [:]))
        }
        #expect(try token(nil) == nil)
        #expect(try token("") == nil, "empty: the admin API is off")
        #expect(try token("0123456789abcdef") == "0123456789abcdef")
        #expect(
            configProblem(["admin": ["token": "short"]]) == "admin.token: must be at least 16 characters (or empty to disable the admin API)"
        )
    }
}
