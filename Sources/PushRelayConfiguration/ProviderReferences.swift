/// The providers a config defines, as the sections that name one (`apps`, `matrix.apps`, `relay`, `calls`) check
/// their references: a name that is not defined, or a provider of the wrong type, is refused with the key named.
package struct ProviderReferences {
    /// Every entry under `providers`, by name.
    package let defined: [String: PushRelayConfig.ProviderConfig]

    package init(_ defined: [String: PushRelayConfig.ProviderConfig]) {
        self.defined = defined
    }

    /// The provider `name` (given under `key`), which must be defined.
    package func provider(_ name: String, key: String) throws -> PushRelayConfig.ProviderConfig {
        guard let p = defined[name] else { throw undefined(name, key: key) }
        return p
    }

    /// The provider name `key` gives, if it gives a non-empty one; the provider must be defined and be a `type` provider.
    package func name(_ r: ConfigTreeReader, _ key: String, type: String) throws -> String? {
        guard let name = try r.string(key), !name.isEmpty else { return nil }
        let p = try provider(name, key: key)
        guard p.type == type else { throw ConfigError(key: key, problem: "names '\(name)', a \(p.type) provider; it must be a \(type) provider") }
        return name
    }

    /// `key` names `name`, which no entry under `providers` defines.
    func undefined(_ name: String, key: String) -> ConfigError {
        ConfigError(
            key: key,
            problem: "names '\(name)', which is not defined under 'providers' (defined: \(defined.keys.sorted().joined(separator: ", ")))"
        )
    }
}
