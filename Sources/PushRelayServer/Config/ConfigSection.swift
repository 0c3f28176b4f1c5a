/// A top-level entry of the config file: a section of keys (`http:`), or a value read whole (`apps`, `providers`).
struct ConfigSection: Sendable {
    /// What the entry holds.
    enum Content: Sendable {
        /// A mapping of these keys.
        case keys([ConfigKey])
        /// A value read whole; its `PUSHRELAY_*` variable sets it as YAML or JSON text.
        case value
    }

    let name: String
    let content: Content
    /// Whether the section checks its own keys as it is read (`matrix:`, whose errors name where in it a key is),
    /// instead of by the unknown-key check before any section is read.
    let checksItsOwnKeys: Bool

    /// A section of keys, each declared with whether its variable sets it.
    static func section(_ name: String, _ keys: [ConfigKey], checksItsOwnKeys: Bool = false) -> ConfigSection {
        ConfigSection(name: name, content: .keys(keys), checksItsOwnKeys: checksItsOwnKeys)
    }

    /// A value read whole, which its variable sets.
    static func value(_ name: String) -> ConfigSection {
        ConfigSection(name: name, content: .value, checksItsOwnKeys: false)
    }

    /// The section's keys (none for a value).
    var keys: [ConfigKey] {
        if case .keys(let keys) = content { return keys }
        return []
    }

    /// The dotted keys (`http.port`, `storage.postgres.url`, `apps`) whose variable sets them.
    var overridableKeys: [String] {
        switch content {
        case .value: [name]
        case .keys(let keys): keys.filter(\.fromEnvironment).map { "\(name).\($0.name)" }
        }
    }
}
