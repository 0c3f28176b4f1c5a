import PushRelayCore

/// The configured provider instances, by name, and the app routes that pick one.
public struct ProviderRegistry: Sendable {
    public let providers: [String: any PushProvider]
    public let routes: AppRoutes

    public init(providers: [String: any PushProvider], routes: AppRoutes) {
        self.providers = providers
        self.routes = routes
    }

    /// The provider for an app id, or nil when no route matches (or the route names a missing provider).
    public func provider(for appID: String?) -> (any PushProvider)? {
        routes.provider(for: appID).flatMap { providers[$0] }
    }
}
