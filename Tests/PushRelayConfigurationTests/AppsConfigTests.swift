import PushRelayConfiguration
import PushRelayCore
import Testing

/// `apps`: the table from app ids to providers.
@Suite struct AppsConfigTests {
    @Test func routesAndProviders() throws {
        let c = try loadConfig(
            """
            providers:
              main: {type: sandbox}
              beta: {type: sandbox}
            apps:
              - {match: "io.example.beta", provider: beta}
              - {match: "*", provider: main}
            """
        )
        #expect(!c.usingDefaultApps)
        #expect(AppProviders(c.apps).provider(for: "io.example.beta") == "beta")
        #expect(AppProviders(c.apps).provider(for: "io.other") == "main")
        let single = try loadConfig("providers:\n  only: {type: sandbox}\n")
        #expect(single.apps == [.init(match: "*", provider: "only")])
    }

    @Test func anEntryIsMatchProviderAndEncryptPayloads() throws {
        let c = try PushRelayConfig(
            tree: [
                "apps": [["match": "io.example.*", "provider": "sandbox", "encrypt_payloads": true], ["match": "*", "provider": "none"]]
            ]
        )
        #expect(
            c.apps == [.init(match: "io.example.*", provider: "sandbox", encryptPayloads: true), .init(match: "*", provider: AppProviders.localOnly)]
        )
        #expect(!c.usingDefaultApps, "apps alone is a configuration")
        #expect(configProblem(["apps": ["*"]]) == "apps[0]: must be a mapping {match, provider}")
        #expect(configProblem(["apps": [["provider": "sandbox"]]]) == "apps[0].match: is required: an app id or glob such as 'io.example.*'")
        #expect(configProblem(["apps": [["match": "*"]]]) == "apps[0].provider: is required: the name of an entry under 'providers'")
        #expect(configProblem(["apps": [["match": "*", "provider": "sandbox", "fallback": true]]]) == "apps[0].fallback: unknown key")
        #expect(
            configProblem(["apps": [["match": "*", "provider": "sandbox", "encrypt_payloads": "yes"]]])
                == "apps[0].encrypt_payloads: must be true or false"
        )
        #expect(
            configProblem(["apps": [["match": "*", "provider": "nowhere"]]])
                == "apps[0].provider: names 'nowhere', which is not defined under 'providers' (defined: sandbox)"
        )
    }

    @Test func severalProvidersNeedRoutes() {
        #expect(
            configProblem(["providers": ["a": ["type": "sandbox"], "b": ["type": "sandbox"]]])
                == "apps: is required when several providers are configured: map app ids to provider names"
        )
    }
}
