import Testing

@testable import PushRelayProviders

/// Every APNs refusal that says the setup is wrong has one line of remedy; other reasons have none.
@Suite struct APNsRemedyTests {
    @Test(arguments: [
        "BadDeviceToken", "DeviceTokenNotForTopic", "TopicDisallowed", "BadTopic", "InvalidProviderToken", "ExpiredProviderToken",
        "BadCertificateEnvironment", "TooManyProviderTokenUpdates", "MissingProviderToken",
    ])
    func aSetupErrorHasItsRemedy(reason: String) throws {
        let line = try #require(APNsRemedy.line(for: reason, topic: "io.example.app"))
        #expect(!line.isEmpty && !line.contains("\n"))
    }

    @Test func theRemedyNamesWhatToChange() {
        #expect(APNsRemedy.line(for: "DeviceTokenNotForTopic", topic: "io.example.app")?.contains("io.example.app") == true)
        #expect(APNsRemedy.line(for: "InvalidProviderToken", topic: "t")?.contains("team_id") == true)
        #expect(APNsRemedy.line(for: "ExpiredProviderToken", topic: "t")?.contains("clock") == true)
        #expect(APNsRemedy.line(for: "BadDeviceToken", topic: "t")?.contains("sandbox") == true)
    }

    @Test func otherReasonsHaveNone() {
        #expect(APNsRemedy.line(for: "PayloadTooLarge", topic: "t") == nil)
        #expect(APNsRemedy.line(for: "Unregistered", topic: "t") == nil)
    }
}
