/// One key of a config section, declared once beside the section's reader: its name and whether a `PUSHRELAY_*`
/// variable sets it. `PushRelayConfig.sections` gathers the sections; the unknown-key check (`knownKeys`) and the
/// environment overrides (`overridableKeys`) are both read from there.
package struct ConfigKey: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The key within its section (`port`); a key of a nested section starts with that section's name
    /// (`postgres.url` under `storage`).
    package let name: String
    /// Whether `PUSHRELAY_<SECTION>_<NAME>` (`PushRelayConfig.environmentVariable(for:)`) sets the key.
    package let fromEnvironment: Bool

    /// A key its `PUSHRELAY_*` variable may set, as a string literal declares one.
    package init(stringLiteral name: String) {
        self.name = name
        self.fromEnvironment = true
    }

    private init(name: String, fromEnvironment: Bool) {
        self.name = name
        self.fromEnvironment = fromEnvironment
    }

    /// A key only the config file sets: no variable overrides it.
    package static func fileOnly(_ name: String) -> ConfigKey { ConfigKey(name: name, fromEnvironment: false) }
}

extension Array where Element == ConfigKey {
    /// The names a mapping may hold: at the section's top level (`nil`), or in its nested section `nested`
    /// (`postgres` under `storage` holds `url`, `pool_size`, `tls`).
    package func names(in nested: String? = nil) -> Set<String> {
        Set(
            compactMap { key in
                let parts = key.name.split(separator: ".", maxSplits: 1).map(String.init)
                guard let nested else { return parts[0] }
                return parts.count == 2 && parts[0] == nested ? parts[1] : nil
            }
        )
    }
}
