import Logging
import PushRelayCore
import PushRelayProviders
import PushRelayStore
import ServiceLifecycle

/// Sets up the WebPush relay and the calls API from the config: which provider instances they send through (with a
/// second APNs instance for the other environment), their services and routes.
struct RelayModule {
    /// The provider instances the relay sends through, by APNs environment and for FCM.
    struct Providers {
        var apnsProduction: String?
        var apnsDevelopment: String?
        var fcm: String?
        /// Instances created here (not in the registry): handed to the dispatcher, shut down after the server stopped.
        var owned: [String: any PushProvider] = [:]
    }

    let relay: WebPushRelayService
    let calls: CallService

    /// The relay's providers. The request path chooses the APNs host: the configured instance keeps its own
    /// environment and a second instance serves the other, unless an explicit `endpoint` (a test, a proxy) serves both.
    static func providers(config: PushRelayConfig, registry: ProviderRegistry, clock: any WallClock, logger: Logger) -> Providers {
        var out = Providers(fcm: config.relay.fcmProvider.flatMap { registry.providers[$0] == nil ? nil : $0 })
        guard let name = config.relay.apnsProvider, registry.providers[name] != nil else { return out }
        // The second instance is built from the first one's config (checked at load, so it parses again).
        guard let options = config.providers[name], options.type == ProviderType.apns.rawValue,
            let configuration = try? APNsProvider.Configuration(options: options.options, baseDirectory: config.baseDirectory),
            configuration.endpoint == configuration.environment.endpoint
        else {
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

    init(
        config: PushRelayConfig,
        providers: Providers,
        registry: ProviderRegistry,
        dispatcher: Dispatcher,
        devices: any CallDeviceStorage,
        apiKeys: any APIKeyStorage,
        localPush: LocalPushHub?,
        limiter: FailedAuthLimiter,
        clock: any WallClock,
        logger: Logger
    ) {
        relay = WebPushRelayService(
            settings: config.relay,
            apnsProduction: providers.apnsProduction,
            apnsDevelopment: providers.apnsDevelopment,
            fcm: providers.fcm,
            dispatcher: dispatcher,
            clock: clock,
            logger: logger
        )
        calls = CallService(
            store: devices,
            apiKeys: apiKeys,
            apns: config.calls.apnsProvider.flatMap { registry.providers[$0] == nil ? nil : $0 },
            fcm: config.calls.fcmProvider.flatMap { registry.providers[$0] == nil ? nil : $0 },
            dispatcher: dispatcher,
            hub: localPush,
            limiter: limiter,
            channelConfirmTimeoutMs: config.calls.channelConfirmTimeoutMs,
            clock: clock,
            logger: logger
        )
    }

    func register(_ routes: RouteTable<PushRelayRequestContext>, maxBodyBytes: Int) {
        WebPushRelayRoutes(service: relay).register(routes)
        CallRoutes(service: calls, maxBodyBytes: maxBodyBytes).register(routes)
    }
}
