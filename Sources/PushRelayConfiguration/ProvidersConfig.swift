import PushRelayCore
import PushRelayProviders

extension PushRelayConfig {
    /// One entry of `providers:`: a named provider instance of one `ProviderType`.
    public struct ProviderConfig: Sendable {
        public var name: String
        public var type: String
        /// The provider's own keys (type-specific), as written in the file.
        public var options: [String: JSONValue]

        public init(name: String, type: String, options: [String: JSONValue] = [:]) {
            self.name = name
            self.type = type
            self.options = options
        }
    }

    /// Reads `providers:` (name → `{type, …options}`); nil when not set. Each entry's options are checked by its
    /// type (`ProviderType.check`: key files read, keys parsed), relative paths against `baseDirectory`.
    package static func providers(reading r: ConfigTreeReader, baseDirectory: String?) throws -> [String: ProviderConfig]? {
        guard let p = try r.object("providers") else { return nil }
        var providers: [String: ProviderConfig] = [:]
        for name in p.keys.sorted() {
            let key = "providers.\(name)"
            guard case .object(var options)? = p[name] else { throw ConfigError(key: key, problem: "must be a mapping with at least a 'type'") }
            guard case .string(let type)? = options.removeValue(forKey: "type") else {
                throw ConfigError(key: "\(key).type", problem: "is required: one of \(ProviderType.names)")
            }
            guard let kind = ProviderType(rawValue: type) else {
                throw ConfigError(key: "\(key).type", problem: "unknown provider type '\(type)': use \(ProviderType.names)")
            }
            do {
                try kind.check(options: options, baseDirectory: baseDirectory)
            } catch {
                throw ConfigError(provider: name, error)
            }
            providers[name] = ProviderConfig(name: name, type: type, options: options)
        }
        return providers
    }
}

extension ConfigError {
    /// A provider's option error under `providers.<name>` (the option's own key appended when it names one).
    package init(provider name: String, _ error: ProviderConfigError) {
        self.init(key: error.key.isEmpty ? "providers.\(name)" : "providers.\(name).\(error.key)", problem: error.problem)
    }
}
