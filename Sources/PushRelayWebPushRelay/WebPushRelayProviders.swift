import Logging
import PushRelayCore
import PushRelayProviders

/// The provider instances the WebPush relay sends through, by APNs environment and for FCM: the request path chooses the
/// APNs host, so the configured APNs instance serves its own environment and a second instance, made here, the other.
package struct WebPushRelayProviders {
    package var apnsProduction: String?
    package var apnsDevelopment: String?
    package var fcm: String?
    /// Instances created here (not in the registry): handed to the dispatcher, shut down after the server stopped.
    package var owned: [String: any PushProvider] = [:]

    /// The relay's providers from `relay.apns_provider` and `relay.fcm_provider`: the configured APNs instance keeps its
    /// own environment and a second one serves the other, unless an explicit `endpoint` (a test, a proxy) serves both.
    ///
    /// - Parameter apnsConfiguration: The configuration of the APNs provider of this name, which the second instance
    ///   is built from; nil when there is none (not an APNs provider of the config).
    package static func make(
        settings: WebPushRelaySettings,
        registry: ProviderRegistry,
        apnsConfiguration: (String) -> APNsProvider.Configuration?,
        clock: any TimePort,
        logger: Logger
    ) -> WebPushRelayProviders {
        var out = WebPushRelayProviders(fcm: registry.running(settings.fcmProvider))
        guard let name = registry.running(settings.apnsProvider) else { return out }
        guard let configuration = apnsConfiguration(name), configuration.endpoint == configuration.environment.endpoint else {
            out.apnsProduction = name
            out.apnsDevelopment = name
            return out
        }
        var other = configuration
        other.environment = configuration.environment == .production ? .sandbox : .production
        other.endpoint = other.environment.endpoint
        let second = APNsProvider(name: "\(name)-\(other.environment.rawValue)", configuration: other, clock: clock, logger: logger)
        out.owned[second.name] = second
        if configuration.environment == .production {
            out.apnsProduction = name
            out.apnsDevelopment = second.name
        } else {
            out.apnsProduction = second.name
            out.apnsDevelopment = name
        }
        return out
    }
}
