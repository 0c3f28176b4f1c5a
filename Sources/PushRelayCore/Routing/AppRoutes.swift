/// Which provider instance serves an app: `apps: [{match: "<app_id glob>", provider: <name>}]`.
///
/// An exact app id wins over globs; among globs the first listed wins. Routing is data, not code.
public struct AppRoutes: Sendable {
    public struct Route: Sendable, Equatable {
        public var match: String
        public var provider: String
        public init(match: String, provider: String) {
            self.match = match
            self.provider = provider
        }
    }

    /// The provider name of local-only apps: delivered over the websocket channel, queued while the device is offline.
    public static let localOnly = "none"

    public let routes: [Route]
    private let compiled: [(glob: Glob, exact: Bool, provider: String)]

    public init(_ routes: [Route]) {
        self.routes = routes
        self.compiled = routes.map { (Glob($0.match), !$0.match.contains(where: { $0 == "*" || $0 == "?" }), $0.provider) }
    }

    /// The provider name for an app id (a missing app id only matches `*`).
    public func provider(for appID: String?) -> String? {
        let id = appID ?? ""
        if let exact = compiled.first(where: { $0.exact && $0.glob.matches(id) }) { return exact.provider }
        return compiled.first(where: { !$0.exact && $0.glob.matches(id) })?.provider
    }
}
