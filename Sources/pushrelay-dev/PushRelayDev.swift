import ArgumentParser

/// `pushrelay-dev`: development helpers, built from the test fakes. Not part of the `pushrelay` release binary.
@main
struct PushRelayDev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushrelay-dev",
        abstract: "PushRelay development helpers (fake providers on loopback, the provider client under load, WebPush encryption's cost).",
        subcommands: [FakeProviders.self, ProviderLoad.self, WebPushCost.self]
    )
}
