import Hummingbird
import Logging
import NIOCore
import PushRelayCore
import PushRelayProviders
import PushRelayStore
import ServiceLifecycle

/// Builds the PushRelay HTTP application from a validated config and an open database.
public enum PushRelayApplication {
    public static func build(
        config: PushRelayConfig,
        database: PushRelayDatabase,
        clock: any WallClock = SystemWallClock(),
        providerInstances: [String: any PushProvider] = [:],
        logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let store = QuotaStore(database: database)
        let registry = try makeRegistry(config, instances: providerInstances)
        if config.usingDefaultRoutes || registry.everythingSandboxed {
            logger.warning("every app routes to the sandbox provider: notifications are recorded in the delivery log and nothing leaves this machine. Configure 'providers' and 'apps' to deliver for real.")
        }
        let service = NotificationService(
            store: store, registry: registry, policy: config.quotaPolicy, delivery: config.delivery, clock: clock,
            iosOptions: IOSTranslationOptions(companionAppIDs: config.iosCompanionAppIDs), logger: logger)

        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: JSONErrorMiddleware())
        let routes = RouteTable(router: router)
        routes.on("/health", [.get: { _, _ in JSONResponse.make(status: .ok, body: ["status": "ok"]) }])
        HomeAssistantRoutes<BasicRequestContext>(service: service, maxBodyBytes: config.http.maxBodyBytes).register(routes)
        if let token = config.adminToken {
            AdminRoutes<BasicRequestContext>(store: store, policy: config.quotaPolicy, clock: clock, token: token,
                                             maxBodyBytes: config.http.maxBodyBytes).register(routes)
        }

        return Application(
            router: router,
            configuration: .init(address: .hostname(config.http.host, port: config.http.port), serverName: "PushRelay"),
            services: [
                DatabaseService(database: database, logger: logger),
                PruneService(store: store, clock: clock, retentionDays: config.quota.retentionDays, logger: logger),
            ],
            onServerRunning: onServerRunning,
            logger: logger
        )
    }

    /// Builds the provider instances the config names. `instances` supplies ready-made ones by name (tests, embedding).
    static func makeRegistry(_ config: PushRelayConfig, instances: [String: any PushProvider] = [:]) throws -> ProviderRegistry {
        var providers: [String: any PushProvider] = instances
        for (name, p) in config.providers where instances[name] == nil {
            switch p.type {
            case "sandbox": providers[name] = SandboxProvider(name: name)
            default: throw ConfigError(key: "providers.\(name).type", problem: "unsupported provider type '\(p.type)'")
            }
        }
        return ProviderRegistry(providers: providers, routes: AppRoutes(config.apps))
    }
}

/// Keeps the database open while the server runs; checkpoints and closes it after the server stopped
/// (services shut down in reverse order, so every in-flight request has finished and committed by then).
struct DatabaseService: Service {
    let database: PushRelayDatabase
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        do {
            try await database.flushAndClose()
            logger.info("database closed", metadata: ["path": .string(database.path)])
        } catch {
            logger.error("closing the database failed: \(error)")
        }
    }
}

/// Deletes usage and delivery-log days older than `quota.retention_days`, at start and every hour.
struct PruneService: Service {
    let store: QuotaStore
    let clock: any WallClock
    let retentionDays: Int
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let n = try await store.prune(today: UTCDay(clock.now()), retentionDays: retentionDays)
                if n > 0 { logger.info("pruned \(n) rows older than \(retentionDays) days") }
            } catch {
                logger.error("pruning old quota days failed: \(error)")
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(3600)) }
        }
    }
}
