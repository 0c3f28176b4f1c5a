import PushRelayCore

/// The options of one provider type, read and checked: relative paths resolved against the config file's folder, key
/// files read and keys parsed, so that a mistake stops the server at start with the option named.
public protocol ProviderConfiguration: Sendable {
    /// Reads and checks `options` (the provider's keys, without `type`); relative paths are resolved against
    /// `baseDirectory` (the config file's folder).
    init(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError)
}
