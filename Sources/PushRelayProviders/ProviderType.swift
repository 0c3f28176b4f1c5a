import Logging
import PushRelayCore

/// The provider types a config may name (`providers.<name>.type`), in one table: how each one's options are checked
/// and how an instance is built from them. The config reader checks with it and the application builds with it.
public enum ProviderType: String, CaseIterable, Sendable {
    case sandbox
    case fcm
    case apns
    case webpush

    /// The types, as the config error lists them: "sandbox, fcm, apns, webpush".
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The type's implementation: its `Configuration` checks the options and builds an instance from them.
    var implementation: any ConfiguredProvider.Type {
        switch self {
        case .sandbox: SandboxProvider.self
        case .fcm: FCMProvider.self
        case .apns: APNsProvider.self
        case .webpush: WebPushProvider.self
        }
    }

    /// Checks `options` (the provider's keys, without `type`) as building would, without building anything: a key
    /// file that cannot be read, a missing key or an unknown one is a `ProviderConfigError` naming the key.
    public func check(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
        try implementation.checkOptions(options, baseDirectory: baseDirectory)
    }

    /// Builds the provider instance `name` from its options.
    public func make(
        name: String,
        options: [String: JSONValue],
        baseDirectory: String?,
        clock: any TimePort,
        logger: Logger
    ) throws(ProviderConfigError) -> any PushProvider {
        try implementation.init(name: name, options: options, baseDirectory: baseDirectory, clock: clock, logger: logger)
    }
}
