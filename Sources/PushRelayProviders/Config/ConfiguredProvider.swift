import Logging
import PushRelayCore
import PushRelayEventLoopClock

/// A provider built from a config entry: its `Configuration` reads and checks the options, and an instance is made
/// from a checked configuration. `ProviderType` checks and builds every type through this, and
/// `init(name:options:baseDirectory:clock:logger:)` is the one way from options to an instance.
public protocol ConfiguredProvider: PushProvider {
    associatedtype Configuration: ProviderConfiguration

    /// Builds the instance `name` from checked options, on `clock`; nil `logger`: one labelled by the type.
    init(name: String, configuration: Configuration, clock: any TimePort, logger: Logger?)
}

extension ConfiguredProvider {
    /// Checks config options as building would (see `Configuration`), without building anything.
    static func checkOptions(_ options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
        _ = try Configuration(options: options, baseDirectory: baseDirectory)
    }

    /// Builds the provider from its config options (see `Configuration`).
    public init(
        name: String,
        options: [String: JSONValue],
        baseDirectory: String?,
        clock: any TimePort = EventLoopClock(),
        logger: Logger? = nil
    ) throws(ProviderConfigError) {
        self.init(name: name, configuration: try Configuration(options: options, baseDirectory: baseDirectory), clock: clock, logger: logger)
    }
}
