import PushRelayCore
import Testing

/// The `apps` table: which provider serves an app id.
@Suite struct AppProvidersTests {
    @Test func exactIDsWinOverGlobs() {
        let apps = AppProviders([
            .init(match: "io.*", provider: "glob"), .init(match: "io.exact", provider: "exact"), .init(match: "*", provider: "all"),
        ])
        #expect(apps.provider(for: "io.exact") == "exact")
        #expect(apps.provider(for: "io.other") == "glob")
        #expect(apps.provider(for: "com.x") == "all")
        #expect(apps.provider(for: nil) == "all")
        #expect(AppProviders([.init(match: "io.x", provider: "p")]).provider(for: "io.y") == nil)
    }

    @Test func theEntryCarriesItsSealing() {
        let apps = AppProviders([.init(match: "io.sealed", provider: "p", encryptPayloads: true), .init(match: "*", provider: "p")])
        #expect(apps.entry(for: "io.sealed")?.encryptPayloads == true)
        #expect(apps.entry(for: "io.plain")?.encryptPayloads == false)
    }
}
