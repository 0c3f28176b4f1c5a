import PushRelayCore

extension PushRelayConfig {
    /// Reads `apps` (after `providers`, which the entries name): an ordered list of `{match, provider, encrypt_payloads}`.
    ///
    /// Without `apps`, a file that configures `providers` routes everything to its only provider, and one with several
    /// providers is refused; a file with neither keeps `defaults`. Every entry must name a defined provider (or
    /// `AppProviders.localOnly`).
    package static func apps(
        reading r: ConfigTreeReader,
        providers: ProviderReferences,
        providersGiven: Bool,
        default defaults: [AppProviders.Entry]
    ) throws -> [AppProviders.Entry] {
        var apps = defaults
        let appsGiven = r.tree["apps"] != nil
        if let list = try r.array("apps") {
            apps = try list.enumerated().map { (k, item) in
                let key = "apps[\(k)]"
                guard case .object(let o) = item else { throw ConfigError(key: key, problem: "must be a mapping {match, provider}") }
                guard case .string(let match)? = o["match"], !match.isEmpty else {
                    throw ConfigError(key: "\(key).match", problem: "is required: an app id or glob such as 'io.example.*'")
                }
                guard case .string(let provider)? = o["provider"] else {
                    throw ConfigError(key: "\(key).provider", problem: "is required: the name of an entry under 'providers'")
                }
                if let extra = o.keys.sorted().first(where: { $0 != "match" && $0 != "provider" && $0 != "encrypt_payloads" }) {
                    throw ConfigError(key: "\(key).\(extra)", problem: "unknown key")
                }
                return AppProviders.Entry(
                    match: match,
                    provider: provider,
                    encryptPayloads: try encryptPayloads(o["encrypt_payloads"], key: "\(key).encrypt_payloads")
                )
            }
        }
        if providersGiven && !appsGiven {
            // Providers without `apps`: every app goes to the only provider, if there is exactly one.
            guard providers.defined.count == 1, let only = providers.defined.keys.first else {
                throw ConfigError(key: "apps", problem: "is required when several providers are configured: map app ids to provider names")
            }
            apps = [.init(match: "*", provider: only)]
        }
        for (k, entry) in apps.enumerated() where providers.defined[entry.provider] == nil && entry.provider != AppProviders.localOnly {
            throw providers.undefined(entry.provider, key: "apps[\(k)].provider")
        }
        return apps
    }

    /// `apps[k].encrypt_payloads`.
    private static func encryptPayloads(_ v: JSONValue?, key: String) throws -> Bool {
        switch v {
        case nil, .null?: return false
        case .bool(let b)?: return b
        default: throw ConfigError(key: key, problem: "must be true or false")
        }
    }
}
