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

    /// Checks `options` (the provider's keys, without `type`) as building would, without building anything: a key
    /// file that cannot be read, a missing key or an unknown one is a `ProviderConfigError` naming the key.
    public func check(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
        switch self {
        case .sandbox:
            if let extra = options.keys.sorted().first { throw ProviderConfigError(key: extra, problem: "unknown key for a sandbox provider") }
        case .fcm:
            _ = try FCMProvider.Configuration(options: options, baseDirectory: baseDirectory)
        case .apns:
            _ = try APNsProvider.Configuration(options: options, baseDirectory: baseDirectory)
        case .webpush:
            _ = try WebPushProvider.Configuration(options: options, baseDirectory: baseDirectory)
        }
    }

    /// Builds the provider instance `name` from its options.
    public func make(
        name: String,
        options: [String: JSONValue],
        baseDirectory: String?,
        clock: any TimePort,
        logger: Logger
    ) throws(ProviderConfigError) -> any PushProvider {
        switch self {
        case .sandbox:
            try check(options: options, baseDirectory: baseDirectory)
            return SandboxProvider(name: name)
        case .fcm:
            return try FCMProvider(name: name, options: options, baseDirectory: baseDirectory, clock: clock, logger: logger)
        case .apns:
            return try APNsProvider(name: name, options: options, baseDirectory: baseDirectory, clock: clock, logger: logger)
        case .webpush:
            return try WebPushProvider(name: name, options: options, baseDirectory: baseDirectory, clock: clock, logger: logger)
        }
    }
}
