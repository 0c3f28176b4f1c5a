/// A top-level entry of the config file: a section of keys (`http:`), or a value read whole (`apps`, `providers`).
package struct ConfigSection: Sendable {
    /// What the entry holds.
    package enum Content: Sendable {
        /// A mapping of these keys.
        case keys([ConfigKey])
        /// A value read whole; its `PUSHRELAY_*` variable sets it as YAML or JSON text.
        case value
    }

    package let name: String
    package let content: Content
    /// Whether the section checks its own keys as it is read (`matrix:`, whose errors name where in it a key is),
    /// instead of by the unknown-key check before any section is read.
    let checksItsOwnKeys: Bool

    /// A section of keys, each declared with whether its variable sets it.
    package static func section(_ name: String, _ keys: [ConfigKey], checksItsOwnKeys: Bool = false) -> ConfigSection {
        ConfigSection(name: name, content: .keys(keys), checksItsOwnKeys: checksItsOwnKeys)
    }

    /// A value read whole, which its variable sets.
    package static func value(_ name: String) -> ConfigSection {
        ConfigSection(name: name, content: .value, checksItsOwnKeys: false)
    }

    /// The section's keys (none for a value).
    package var keys: [ConfigKey] {
        if case .keys(let keys) = content { return keys }
        return []
    }

    /// The dotted keys (`http.port`, `storage.postgres.url`, `apps`) whose variable sets them.
    package var overridableKeys: [String] {
        switch content {
        case .value: [name]
        case .keys(let keys): keys.filter(\.fromEnvironment).map { "\(name).\($0.name)" }
        }
    }
}
