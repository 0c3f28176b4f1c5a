import PushRelayConfiguration
import PushRelayProviders
import Testing

/// `providers:`: named provider instances, each checked by its type.
@Suite struct ProvidersConfigTests {
    @Test func theSandboxIsTheDefault() throws {
        let c = try PushRelayConfig(tree: [:])
        #expect(c.providers.keys.sorted() == ["sandbox"] && c.usingDefaultApps)
        #expect(try PushRelayConfig.providers(reading: ConfigTreeReader(tree: [:]), baseDirectory: nil) == nil)
    }

    @Test func eachEntryHasATypeItsOptionsAreCheckedBy() throws {
        let p = try #require(
            try PushRelayConfig.providers(reading: ConfigTreeReader(tree: ["providers": ["test": ["type": "sandbox"]]]), baseDirectory: nil)
        )
        #expect(p["test"]?.name == "test" && p["test"]?.type == "sandbox" && p["test"]?.options == [:])
        #expect(configProblem(["providers": ["p": "sandbox"]]) == "providers.p: must be a mapping with at least a 'type'")
        #expect(configProblem(["providers": ["p": ["kind": "sandbox"]]]) == "providers.p.type: is required: one of \(ProviderType.names)")
        #expect(
            configProblem(["providers": ["p": ["type": "pigeon"]]]) == "providers.p.type: unknown provider type 'pigeon': use \(ProviderType.names)"
        )
        #expect(configProblem(["providers": ["p": ["type": "fcm"]]]).hasPrefix("providers.p."), "the type's own check names the option")
    }
}
