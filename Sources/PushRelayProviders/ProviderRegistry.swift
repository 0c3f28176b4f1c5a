import PushRelayCore

/// The configured provider instances, by name, and the app routes that pick one.
public struct ProviderRegistry: Sendable {
    public let providers: [String: any PushProvider]
    public let routes: AppRoutes

    public init(providers: [String: any PushProvider], routes: AppRoutes) {
        self.providers = providers
        self.routes = routes
    }

    /// `name`, if it names a running provider instance (nil for nil or a name the registry does not hold).
    public func running(_ name: String?) -> String? {
        name.flatMap { providers[$0] == nil ? nil : $0 }
    }

    /// The provider for an app id, or nil when no route matches (or the route names a missing provider).
    public func provider(for appID: String?) -> (any PushProvider)? {
        routes.provider(for: appID).flatMap { providers[$0] }
    }
}
