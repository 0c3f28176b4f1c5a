import Logging
import PushRelayCore
import PushRelayProviders

extension ProviderRegistry {
    /// The provider instances `providers:` names, built as `serve` builds them, with `apps:` routing app ids to them.
    /// `instances` supplies ready-made ones by name (tests, embedding). If one fails, those already built are shut down
    /// before the error (a `ConfigError` naming the provider's key) is thrown.
    package static func make(
        _ config: PushRelayConfig,
        instances: [String: any PushProvider] = [:],
        clock: any TimePort,
        logger: Logger
    ) async throws -> ProviderRegistry {
        var providers: [String: any PushProvider] = instances
        do {
            for (name, p) in config.providers.sorted(by: { $0.key < $1.key }) where instances[name] == nil {
                do {
                    guard let kind = ProviderType(rawValue: p.type) else {
                        throw ConfigError(key: "providers.\(name).type", problem: "unsupported provider type '\(p.type)'")
                    }
                    providers[name] = try kind.make(name: name, options: p.options, baseDirectory: config.baseDirectory, clock: clock, logger: logger)
                } catch let error as ProviderConfigError {
                    throw ConfigError(provider: name, error)
                }
            }
        } catch {
            for (name, p) in providers where instances[name] == nil { await p.shutdown() }
            throw error
        }
        return ProviderRegistry(providers: providers, apps: AppProviders(config.apps))
    }
}
