import PushRelayCore
import PushRelayProviders
import Testing

/// The WebPush provider's options as the config gives them.
@Suite struct WebPushConfigurationTests {
    @Test func theWebPushProviderOptionIsACIDRList() throws {
        let base: [String: JSONValue] = [
            "vapid_private_key": .string(VAPIDTestKey.pem), "vapid_contact_email": "ops@example.org",
        ]
        #expect(try WebPushProvider.Configuration(options: base, baseDirectory: nil).addressPolicy.allowedNetworks.isEmpty, "none by default")
        var opened = base
        opened["allowed_private_networks"] = ["10.0.0.0/8", "fd00::/8"]
        #expect(try WebPushProvider.Configuration(options: opened, baseDirectory: nil).addressPolicy.allowedNetworks.count == 2)
        opened["allowed_private_networks"] = ["10.0.0.0/8", "lan"]
        #expect(throws: ProviderConfigError.self) { try WebPushProvider.Configuration(options: opened, baseDirectory: nil) }
        opened["allowed_private_networks"] = true
        #expect(throws: ProviderConfigError.self) { try WebPushProvider.Configuration(options: opened, baseDirectory: nil) }
    }
}
