import Logging
import PushRelayCore
import PushRelayProviders
import PushRelayStore
import ServiceLifecycle

/// Sets up the WebPush relay and the VoIP API from the config: their provider runners (with a second APNs instance
/// for the other environment), their routes, and a service that closes what they opened.
struct RelayModule {
    let relay: WebPushRelayService
    let voip: CallService
    /// Provider instances created here (not in the registry), shut down after the server stopped.
    let ownedProviders: [any PushProvider]

    init(config: PushRelayConfig, registry: ProviderRegistry, database: PushRelayDatabase, hub: LocalPushHub?, limiter: FailedAuthLimiter,
         clock: any WallClock, logger: Logger) {
        var owned: [any PushProvider] = []
        func runner(_ provider: any PushProvider) -> DeliveryRunner {
            DeliveryRunner(provider: provider, gate: ProviderGate(limit: config.delivery.maxInFlight), retry: config.delivery.retryPolicy,
                           deadlineMs: config.delivery.deadlineMs)
        }
        var production: DeliveryRunner?
        var development: DeliveryRunner?
        if let name = config.relay.apnsProvider, let provider = registry.providers[name] {
            if let apns = provider as? APNsProvider, apns.configuration.endpoint == apns.configuration.environment.endpoint {
                // The path chooses the APNs host: keep the configured instance for its own environment, add one for the other.
                var other = apns.configuration
                other.environment = apns.configuration.environment == .production ? .sandbox : .production
                other.endpoint = other.environment.endpoint
                let second = APNsProvider(name: "\(name)-\(other.environment.rawValue)", configuration: other, clock: clock, logger: logger)
                owned.append(second)
                let mine = runner(apns)
                let theirs = runner(second)
                if apns.configuration.environment == .production {
                    production = mine
                    development = theirs
                } else {
                    production = theirs
                    development = mine
                }
            } else {
                // An explicit `endpoint` (a test or a proxy) serves both environments.
                let r = runner(provider)
                production = r
                development = r
            }
        }
        let fcm = config.relay.fcmProvider.flatMap { registry.providers[$0] }.map(runner)
        relay = WebPushRelayService(settings: config.relay, apnsProduction: production, apnsDevelopment: development, fcm: fcm,
                             store: QuotaStore(database: database), clock: clock, logger: logger)
        voip = CallService(store: VoIPStore(database: database),
                           apns: config.voip.apnsProvider.flatMap { registry.providers[$0] }.map(runner),
                           fcm: config.voip.fcmProvider.flatMap { registry.providers[$0] }.map(runner),
                           hub: hub, limiter: limiter, channelConfirmTimeoutMs: config.voip.channelConfirmTimeoutMs, clock: clock, logger: logger)
        ownedProviders = owned
    }

    func register(_ routes: RouteTable<PushRelayRequestContext>, maxBodyBytes: Int) {
        WebPushRelayRoutes(service: relay).register(routes)
        CallRoutes(service: voip, maxBodyBytes: maxBodyBytes).register(routes)
    }

    var service: some Service { ProvidersService(providers: ownedProviders) }
}
