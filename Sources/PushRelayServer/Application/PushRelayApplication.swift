import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PushRelayAdmin
import PushRelayCalls
import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import PushRelayDoctor
import PushRelayEventLoopClock
import PushRelayHTTP
import PushRelayHomeAssistant
import PushRelayMatrixGateway
import PushRelayProviders
import PushRelayPushChannel
import PushRelaySecurity
import PushRelayServerMetrics
import PushRelayStore
import PushRelayWebPushRelay
import ServiceLifecycle

/// Builds the PushRelay HTTP application from a validated config and open storage.
public enum PushRelayApplication {
    static let serverName = "PushRelay"

    /// - Parameters:
    ///   - clock: The time every handler, service and timer of the server runs on; nil: the system's time on the
    ///     event loops (`EventLoopClock`).
    ///   - listen: Where to listen; nil: `http.host:http.port`.
    ///   - lifecycle: How the server is stopped (`ServerLifecycle`); the application's `lifecycle`.
    public static func build(
        config: PushRelayConfig,
        storage: Storage,
        clock: (any TimePort)? = nil,
        providerInstances: [String: any PushProvider] = [:],
        listen: ListenSocket? = nil,
        lifecycle: ServerLifecycle = ServerLifecycle(),
        logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) async throws -> ServerApplication {
        try await build(
            config: config,
            storage: storage,
            clock: clock ?? EventLoopClock(),
            providerInstances: providerInstances,
            notifyInPipeline: true,
            listen: listen,
            lifecycle: lifecycle,
            logger: logger,
            onServerRunning: onServerRunning
        )
    }

    /// - Parameter notifyInPipeline: Home Assistant's notify POSTs are answered in the connection's pipeline
    ///   (`NotifyFastPath`); false leaves them to the router, like every other route. The server always runs
    ///   with true; the HTTP layer's differential test compares the two.
    static func build(
        config: PushRelayConfig,
        storage: Storage,
        clock: any TimePort,
        providerInstances: [String: any PushProvider],
        notifyInPipeline: Bool,
        listen: ListenSocket? = nil,
        lifecycle: ServerLifecycle = ServerLifecycle(),
        logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void
    ) async throws -> ServerApplication {
        let registry = try await ProviderRegistry.make(config, instances: providerInstances, clock: clock, logger: logger)
        for deprecation in config.deprecations {
            logger.warning("deprecated config key", metadata: ["key": .string(deprecation.key), "use": .string(deprecation.replacement)])
        }
        if config.usingDefaultApps || config.providers.values.allSatisfy({ $0.type == "sandbox" }) {
            logger.warning(
                "every app routes to the sandbox provider: notifications are recorded in the delivery log and nothing leaves this machine. Configure 'providers' and 'apps' to deliver for real."
            )
        }
        let work = BackgroundWork(logger: logger)
        let metrics = config.metricsEnabled ? PushRelayMetrics() : nil

        // One pipeline: every entry point hands its deliveries to this dispatcher.
        let relayProviders = WebPushRelayProviders.make(
            settings: config.relay,
            registry: registry,
            apnsConfiguration: { name in
                // The second instance is built from the first one's options (checked at load, so they parse again).
                guard let p = config.providers[name], p.type == ProviderType.apns.rawValue else { return nil }
                return try? APNsProvider.Configuration(options: p.options, baseDirectory: config.baseDirectory)
            },
            clock: clock,
            logger: logger
        )
        let dispatcher = Dispatcher(
            providers: registry.providers.merging(relayProviders.owned) { a, _ in a },
            quota: storage.quota,
            deliveries: storage.deliveries,
            settings: DispatcherSettings(config.delivery),
            clock: clock,
            metrics: metrics,
            logger: logger
        )
        let cloud = HomeAssistantCloudSender(
            apps: registry.apps,
            dispatcher: dispatcher,
            quota: storage.quota,
            policy: config.quotaPolicy,
            sealer: PayloadSealer(apps: registry.apps, devices: storage.devices, logger: logger),
            localOnly: LocalOnlyQueue(store: storage.pushChannel, settings: config.channel, clock: clock, logger: logger),
            iosOptions: IOSTranslationOptions(companionAppIDs: config.iosCompanionAppIDs),
            clock: clock,
            logger: logger
        )
        let hub = PushChannelHub(
            store: storage.pushChannel,
            settings: config.channel,
            fallback: cloud,
            waiting: cloud.localOnly,
            routing: storage.routing,
            work: work,
            clock: clock,
            logger: logger
        )
        let service = HomeAssistantService(pushChannel: hub, cloud: cloud)

        // One budget of failed credential checks per address, whichever credential was guessed.
        let limiter = FailedAuthLimiter(limit: config.maxFailedAuthsPerMinute)
        let adminAuth = config.adminToken.map { AdminAuth(token: $0, limiter: limiter, clock: clock) }
        let homeAssistantAccess = HomeAssistantAccess(
            keys: config.homeAssistant.keys,
            networks: config.homeAssistant.allowedNetworks,
            limiter: limiter,
            clock: clock
        )
        let channelEndpoint = PushChannelEndpoint(
            hub: hub,
            store: storage.pushChannel,
            settings: config.channel,
            limiter: limiter,
            clock: clock,
            logger: logger
        )
        let sockets = PushChannelSockets(endpoint: channelEndpoint, lifecycle: lifecycle)
        let channelFigures = PushChannelFigures(hub: hub, sockets: sockets)

        let router = Router(context: PushRelayRequestContext.self)
        // Outermost: every line logged while serving a request carries its id.
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: ClientAddressMiddleware(proxies: config.http.trustedProxies))
        // Next, so that it sees the final status, JSON errors included.
        if let metrics { router.add(middleware: MetricsMiddleware(metrics: metrics, clock: clock)) }
        router.add(middleware: JSONErrorMiddleware(maxBodyBytes: config.http.maxBodyBytes))
        // Matrix's 413 has its own form on its path (`M_TOO_LARGE`).
        let bodyLimit = BodyLimit(
            maxBytes: config.http.maxBodyBytes,
            answers: [MatrixRoutes<PushRelayRequestContext>.path: MatrixRoutes<PushRelayRequestContext>.bodyTooLarge]
        )
        router.add(middleware: BodyLimitMiddleware(limit: bodyLimit))
        let routes = RouteTable(router: router)
        if let metrics {
            // Behind the admin token when one is configured.
            var authorizeScrape: MetricsRoute<PushRelayRequestContext>.Authorize?
            if let adminAuth { authorizeScrape = { request, peer in try adminAuth.authorize(request, peer: peer) } }
            let gauges: [PushRelayMetrics.Probe] = storageGauges(storage.engine) + channelFigures.probes
            MetricsRoute<PushRelayRequestContext>(metrics: metrics, gauges: gauges, authorize: authorizeScrape).register(routes)
        }
        HealthRoutes<PushRelayRequestContext>(engine: storage.engine, lifecycle: lifecycle).register(routes)
        try OpenAPIRoutes<PushRelayRequestContext>().register(routes)
        HomeAssistantRoutes<PushRelayRequestContext>(service: service, bodyLimit: bodyLimit, access: homeAssistantAccess).register(routes)
        let relay = WebPushRelayService(
            settings: config.relay,
            apnsProduction: relayProviders.apnsProduction,
            apnsDevelopment: relayProviders.apnsDevelopment,
            fcm: relayProviders.fcm,
            dispatcher: dispatcher,
            work: work,
            clock: clock,
            logger: logger
        )
        WebPushRelayRoutes(service: relay).register(routes)
        let calls = CallService(
            store: storage.devices,
            apiKeys: storage.apiKeys,
            apns: registry.running(config.calls.apnsProvider),
            fcm: registry.running(config.calls.fcmProvider),
            dispatcher: dispatcher,
            channel: CallChannel(
                pushChannel: hub,
                confirmTimeout: .milliseconds(config.calls.channelConfirmTimeoutMs),
                logger: logger
            ),
            limiter: limiter,
            clock: clock,
            logger: logger
        )
        CallRoutes(service: calls, maxBodyBytes: config.http.maxBodyBytes).register(routes)
        channelEndpoint.register(routes)
        let matrix = MatrixGateway(
            settings: MatrixGatewaySettings(config.matrix),
            dispatcher: dispatcher,
            store: storage.matrix,
            clock: clock,
            logger: logger
        )
        MatrixRoutes<PushRelayRequestContext>(gateway: matrix, bodyLimit: bodyLimit).register(routes)
        if let adminAuth {
            AdminRoutes<PushRelayRequestContext>(
                admin: storage.admin,
                quota: storage.quota,
                policy: config.quotaPolicy,
                clock: clock,
                auth: adminAuth,
                maxBodyBytes: config.http.maxBodyBytes,
                deliveries: storage.deliveries,
                matrix: storage.matrix,
                channelFigures: channelFigures,
                metrics: metrics,
                setup: { [engine = storage.engine, providers = registry.providers] in
                    await SetupDoctor.running(config, engine: engine, providers: providers)
                }
            ).register(routes)
        }

        let slowClients = SlowClientGuard.Settings(
            requestTimeout: .milliseconds(config.http.requestTimeoutMs),
            idleTimeout: .milliseconds(config.http.idleTimeoutMs),
            clock: clock
        )
        let connections =
            config.http.maxConnectionsPerAddress > 0 ? ConnectionBudget(limitPerAddress: config.http.maxConnectionsPerAddress, clock: clock) : nil
        let head = ResponseHead(serverName: serverName, clock: clock, isStopping: { lifecycle.isStopping })
        var notifyEndpoint = NotifyFastPath.Endpoint(
            routes: HomeAssistantNotifyRoutes.fastPath(service, access: homeAssistantAccess)
                .merging(MatrixRoutes<PushRelayRequestContext>.fastPath(matrix)) { a, _ in a },
            bodyLimit: bodyLimit,
            head: head,
            metrics: metrics,
            trustedProxies: config.http.trustedProxies
        )
        notifyEndpoint.guards = HomeAssistantNotifyRoutes.fastPathGuards(homeAssistantAccess)
        let notify = notifyEndpoint
        return ServerApplication(
            responder: router.buildResponder(),
            lifecycle: lifecycle,
            logger: logger,
            services: [
                StorageService(engine: storage.engine, logger: logger),
                StorageMonitor(engine: storage.engine, clock: clock, logger: logger),
                PruneService(
                    admin: storage.admin,
                    clock: clock,
                    retentionDays: config.quota.retentionDays,
                    metrics: metrics,
                    logger: logger,
                    bindings: storage.pushChannel
                ),
                ProvidersService(providers: Array(registry.providers.values) + Array(relayProviders.owned.values)),
                // Shut down before the providers and the storage its work needs (services stop in reverse order).
                work,
                PushChannelService(hub: hub, sockets: sockets),
                MatrixRetryService(
                    gateway: matrix,
                    claimLease: MatrixRetryService.lease(deadlineMs: Int64(config.delivery.deadlineMs))
                ),
            ],
            serverName: serverName,
            head: head,
            channel: { responder in
                PushRelayHTTPChannel(
                    responder: responder,
                    websocket: WebSocketEndpoint(
                        path: PushChannelEndpoint.path,
                        maxFrameBytes: sockets.settings.maxFrameBytes,
                        attach: { channel, peer in try sockets.attach(to: channel, peer: peer) }
                    ),
                    notify: notifyInPipeline ? notify : nil,
                    slowClients: slowClients,
                    connections: connections,
                    trustedProxies: config.http.trustedProxies,
                    lifecycle: lifecycle,
                    head: head,
                    clock: clock
                )
            },
            listener: HTTPListener.Settings(
                listen: listen ?? .address(host: config.http.host, port: config.http.port),
                drainPeriod: .milliseconds(config.http.drainPeriodMs),
                // An answer waits for the delivery deadline at most; a websocket for its peer's close frame.
                finishLimit: .milliseconds(config.delivery.deadlineMs) + .seconds(5)
            ),
            clock: clock,
            serverRunning: onServerRunning
        )
    }

    /// The storage engine's figures as `/metrics` gauges.
    /// The engine's own statistics, and `pushrelay_storage_writable`: 1 while the database takes writes, 0 during a
    /// fault (while `/ready` answers 503 `NotReady`). A stop's drain leaves it at 1, so an alert on it does not fire
    /// on a restart.
    private static func storageGauges(_ engine: any StorageEngine) -> [PushRelayMetrics.Probe] {
        let writable = PushRelayMetrics.Probe(
            name: "pushrelay_storage_writable",
            help: "1 while the database takes writes, 0 while it refuses them (GET /ready answers 503 NotReady)."
        ) { engine.health.isOK ? 1 : 0 }
        return [writable]
            + engine.statistics().indices.map { i in
                let s = engine.statistics()[i]
                return .init(name: s.name, help: s.help) { engine.statistics()[i].value }
            }
    }
}

/// Shuts the provider clients down after the server stopped (their connection pools must be closed explicitly).
struct ProvidersService: Service {
    let providers: [any PushProvider]

    func run() async throws {
        try? await gracefulShutdown()
        for p in providers { await p.shutdown() }
    }
}

/// Keeps the storage open while the server runs; makes every queued write durable and closes it after the server
/// stopped (services shut down in reverse order, so every in-flight request has finished by then).
struct StorageService: Service {
    let engine: any StorageEngine
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        do {
            try await engine.flushAndClose()
            var figures: Logger.Metadata = [:]
            for s in engine.statistics() { figures[s.name] = .stringConvertible(Int(s.value)) }
            logger.info("database closed", metadata: figures)
        } catch {
            logger.error("closing the database failed: \(error)")
        }
    }
}
