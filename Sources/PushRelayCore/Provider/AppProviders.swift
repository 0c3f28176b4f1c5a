/// Which provider instance serves an app: the config's `apps: [{match: "<app_id glob>", provider: <name>}]`.
///
/// An exact app id wins over globs; among globs the first listed wins. The table is data, not code.
public struct AppProviders: Sendable {
    /// One `apps` entry: the app ids it matches, the provider that serves them, and whether their notifications are
    /// sealed.
    public struct Entry: Sendable, Equatable {
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

    public let entries: [Entry]
    private let compiled: [(glob: Glob, exact: Bool, entry: Entry)]

    public init(_ entries: [Entry]) {
        self.entries = entries
        self.compiled = entries.map { (Glob($0.match), !$0.match.contains(where: { $0 == "*" || $0 == "?" }), $0) }
    }

    /// The provider name for an app id (a missing app id only matches `*`).
    public func provider(for appID: String?) -> String? {
        entry(for: appID)?.provider
    }

    /// The entry that serves an app id: the exact match, else the first matching glob.
    public func entry(for appID: String?) -> Entry? {
        let id = appID ?? ""
        if let exact = compiled.first(where: { $0.exact && $0.glob.matches(id) }) { return exact.entry }
        return compiled.first(where: { !$0.exact && $0.glob.matches(id) })?.entry
    }
}
