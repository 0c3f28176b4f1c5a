/// A provider's options are wrong. `key` is relative to the provider entry (e.g. `service_account_file`), so the
/// config loader can prefix it with `providers.<name>.` and point the admin at the exact line to fix.
public struct ProviderConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The offending option, relative to the provider (`key_file`, `service_account_json.private_key`…).
    public var key: String
    /// What is wrong and, where possible, how to fix it. Never contains secret material.
    public var problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { key.isEmpty ? problem : "\(key): \(problem)" }
}
