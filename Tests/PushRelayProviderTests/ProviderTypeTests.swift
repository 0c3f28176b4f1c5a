import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

/// Each provider type is checked and built through its one configuration: `make` builds the type's own instance
/// under the given name, and `check` refuses exactly what `make` refuses, with the same error.
@Suite struct ProviderTypeTests {
    /// Options each type accepts, and one mistake each refuses.
    static func options(_ type: ProviderType) -> (valid: [String: JSONValue], mistake: (options: [String: JSONValue], key: String)) {
        switch type {
        case .sandbox:
            return ([:], (["colour": "blue"], "colour"))
        case .fcm:
            let account: JSONValue = .string(Shared.account.json(tokenURI: "https://oauth2.googleapis.com/token"))
            return (["service_account_json": account], (["service_account_json": account, "max_connections": 0], "max_connections"))
        case .apns:
            let valid: [String: JSONValue] = [
                "key_file": .string(Shared.apnsKeyFile), "key_id": .string(Shared.apnsKey.keyID), "team_id": .string(Shared.apnsKey.teamID),
                "topic": .string(bundleID),
            ]
            return (valid, (valid.merging(["environment": "staging"]) { _, new in new }, "environment"))
        case .webpush:
            let valid: [String: JSONValue] = ["vapid_private_key": .string(VAPIDTestKey.pem), "vapid_contact_email": "ops@example.org"]
            return (valid, (valid.merging(["ttl": -1]) { _, new in new }, "ttl"))
        }
    }

    @Test(arguments: ProviderType.allCases)
    func makeBuildsTheTypesOwnInstanceUnderItsName(_ type: ProviderType) async throws {
        let provider = try type.make(
            name: "p-\(type.rawValue)",
            options: Self.options(type).valid,
            baseDirectory: nil,
            clock: ManualClock(),
            logger: quietLogger
        )
        #expect(provider.name == "p-\(type.rawValue)")
        switch type {
        case .sandbox: #expect(provider is SandboxProvider)
        case .fcm: #expect(provider is FCMProvider)
        case .apns: #expect(provider is APNsProvider)
        case .webpush: #expect(provider is WebPushProvider)
        }
        await provider.shutdown()
    }

    @Test(arguments: ProviderType.allCases)
    func checkRefusesWhatMakeRefusesWithTheSameError(_ type: ProviderType) throws {
        let (valid, mistake) = Self.options(type)
        try type.check(options: valid, baseDirectory: nil)
        let checked = #expect(throws: ProviderConfigError.self) { try type.check(options: mistake.options, baseDirectory: nil) }
        let made = #expect(throws: ProviderConfigError.self) {
            try type.make(name: "p", options: mistake.options, baseDirectory: nil, clock: ManualClock(), logger: quietLogger)
        }
        #expect(checked?.key == mistake.key)
        #expect(checked == made)
    }

    @Test func aSandboxProviderHasNoOptions() {
        #expect(throws: ProviderConfigError(key: "colour", problem: "unknown key for a sandbox provider")) {
            try ProviderType.sandbox.check(options: ["colour": "blue", "size": 1], baseDirectory: nil)
        }
    }
}
