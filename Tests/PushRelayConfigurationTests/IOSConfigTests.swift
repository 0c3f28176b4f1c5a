import PushRelayConfiguration
import Testing

/// `ios.companion_app_ids`.
@Suite struct IOSConfigTests {
    @Test func companionAppIDsAreNonEmptyGlobs() throws {
        #expect(try PushRelayConfig.load(file: nil, environment: [:]).iosCompanionAppIDs == ["*io.robbie.HomeAssistant*"])
        let c = try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_IOS_COMPANION_APP_IDS": "[io.example.ha, '*beta*']"])
        #expect(c.iosCompanionAppIDs == ["io.example.ha", "*beta*"])
        #expect(configProblem(["ios": ["companion_app_ids": ["ok", ""]]]) == "ios.companion_app_ids[1]: must be a non-empty string")
        #expect(configProblem(["ios": ["companion_app_ids": "io.example.ha"]]) == "ios.companion_app_ids: must be a list")
    }
}
