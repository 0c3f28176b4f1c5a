import PushRelayCore

/// The configured provider instances, by name, and the app table that picks one for an app id.
public struct ProviderRegistry: Sendable {
    public let providers: [String: any PushProvider]
    public let apps: AppProviders

    public init(providers: [String: any PushProvider], apps: AppProviders) {
        self.providers = providers
        self.apps = apps
    }

    /// `name`, if it names a running provider instance (nil for nil or a name the registry does not hold).
    public func running(_ name: String?) -> String? {
        name.flatMap { providers[$0] == nil ? nil : $0 }
    }

    /// The provider for an app id, or nil when no `apps` entry matches (or the entry names a missing provider).
    public func provider(for appID: String?) -> (any PushProvider)? {
        apps.provider(for: appID).flatMap { providers[$0] }
    }
}
