import Testing

@testable import PushRelayProviders

/// Every FCM and Google OAuth refusal that says the setup or the token is wrong has one line of remedy.
@Suite struct FCMRemedyTests {
    @Test(arguments: ["THIRD_PARTY_AUTH_ERROR", "SENDER_ID_MISMATCH", "UNREGISTERED", "INVALID_ARGUMENT", "PERMISSION_DENIED", "invalid_grant"])
    func aSetupErrorHasItsRemedy(code: String) throws {
        let line = try #require(FCMRemedy.line(for: code, projectID: "my-project"))
        #expect(!line.isEmpty && !line.contains("\n"))
    }

    @Test func theRemedyNamesWhatToChange() {
        #expect(FCMRemedy.line(for: "THIRD_PARTY_AUTH_ERROR", projectID: "p")?.contains("Apple app configuration") == true)
        #expect(FCMRemedy.line(for: "PERMISSION_DENIED", projectID: "my-project")?.contains("my-project") == true)
        #expect(FCMRemedy.line(for: "invalid_grant", projectID: "p")?.contains("clock") == true)
        #expect(FCMRemedy.line(for: "QUOTA_EXCEEDED", projectID: "p") == nil)
    }
}
