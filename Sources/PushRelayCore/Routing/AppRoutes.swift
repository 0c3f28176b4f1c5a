/// Which provider instance serves an app: `apps: [{match: "<app_id glob>", provider: <name>}]`.
///
/// An exact app id wins over globs; among globs the first listed wins. Routing is data, not code.
public struct AppRoutes: Sendable {
    public struct Route: Sendable, Equatable {
        public var match: String
        public var provider: String
        /// `encrypt_payloads`: notifications to tokens of registered devices are sealed with the device's key.
        public var encryptPayloads: Bool
        public init(match: String, provider: String, encryptPayloads: Bool = false) {
            self.match = match
            self.provider = provider
            self.encryptPayloads = encryptPayloads
        }
    }

    /// The provider name of local-only apps: delivered over the push channel, queued while the device is offline.
    public static let localOnly = "none"

    public let routes: [Route]
    private let compiled: [(glob: Glob, exact: Bool, route: Route)]

    public init(_ routes: [Route]) {
        self.routes = routes
        self.compiled = routes.map { (Glob($0.match), !$0.match.contains(where: { $0 == "*" || $0 == "?" }), $0) }
    }

    /// The provider name for an app id (a missing app id only matches `*`).
    public func provider(for appID: String?) -> String? {
        route(for: appID)?.provider
    }

    /// The route that serves an app id: the exact match, else the first matching glob.
    public func route(for appID: String?) -> Route? {
        let id = appID ?? ""
        if let exact = compiled.first(where: { $0.exact && $0.glob.matches(id) }) { return exact.route }
        return compiled.first(where: { !$0.exact && $0.glob.matches(id) })?.route
    }
}
