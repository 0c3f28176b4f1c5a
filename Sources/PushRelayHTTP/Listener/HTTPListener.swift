import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import PushRelayCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The server's listening socket and its connections, as a service: binds `http.host:http.port` or takes the socket
/// systemd passed (`ListenSocket`), hands each accepted connection to `PushRelayHTTPChannel`, and on graceful shutdown
/// stops in the order `ServerLifecycle` describes: drain (still accepting), close the listening socket, let every
/// connection finish, return. The services that must outlive the connections (background work, providers, storage)
/// stop after it.
package struct HTTPListener: Service {
    package struct Settings: Sendable {
        package var listen: ListenSocket
        /// `http.drain_period`.
        package var drainPeriod: Duration
        /// How long the connections may take to finish once the listening socket closed, before the rest are closed
        /// as they are: an answer waits for `delivery.deadline_ms` at most, a websocket for its peer's close frame
        /// `SocketClosing.timeout` at most.
        package var finishLimit: Duration
        /// The length of the queue of connections the kernel completed and nobody accepted yet.
        package var backlog: Int32 = 256
        /// Of a socket passed by systemd, whose queue must hold every connection that arrives while the service restarts
        /// (the kernel caps it at `net.core.somaxconn`).
        var inheritedBacklog: Int32 = 4096

        package init(listen: ListenSocket, drainPeriod: Duration, finishLimit: Duration, backlog: Int32 = 256, inheritedBacklog: Int32 = 4096) {
            self.listen = listen
            self.drainPeriod = drainPeriod
            self.finishLimit = finishLimit
            self.backlog = backlog
            self.inheritedBacklog = inheritedBacklog
        }
    }

    package let channel: PushRelayHTTPChannel
    package let settings: Settings
    package let lifecycle: ServerLifecycle
    /// Where the drain and the wait for the connections wait.
    package let clock: any TimePort
    package let eventLoopGroup: any EventLoopGroup
    package let onServerRunning: @Sendable (any Channel) async -> Void
    package let logger: Logger

    package init(
        channel: PushRelayHTTPChannel,
        settings: Settings,
        lifecycle: ServerLifecycle,
        clock: any TimePort,
        eventLoopGroup: any EventLoopGroup,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void,
        logger: Logger
    ) {
        self.channel = channel
        self.settings = settings
        self.lifecycle = lifecycle
        self.clock = clock
        self.eventLoopGroup = eventLoopGroup
        self.onServerRunning = onServerRunning
        self.logger = logger
    }

    package func run() async throws {
        let connections = OpenConnections()
        let server = try await bind(connections)
        let address = server.channel.localAddress.map(Self.describe) ?? "?"
        switch settings.listen {
        case .address: logger.info("listening on \(address)")
        case .inherited(let fd): logger.info("listening on \(address) (the socket passed by systemd, descriptor \(fd))")
        }
        if let warning = Self.unixSocketWarning(server.channel.localAddress) { logger.warning("\(warning)") }
        await onServerRunning(server.channel)

        let failed = await withTaskGroup(of: Void.self) { group -> Bool in
            group.addTask { await stopGracefully(server: server.channel, connections: connections) }
            await accept(server, connections: connections)
            // The listening socket closed: by the stop (which waits until every connection finished), or by itself.
            guard lifecycle.phase < .closing, !Task.isCancelled else { return false }
            group.cancelAll()
            return true
        }
        if failed { throw ListenerClosed(address: address) }
    }

    /// Accepts until the listening socket closes, each connection handled in a child task; returns once the HTTP
    /// connections' tasks ended (a websocket's ends at its upgrade).
    private func accept(_ server: NIOAsyncChannel<PushRelayHTTPChannel.Value, Never>, connections: OpenConnections) async {
        let channel = self.channel
        let logger = self.logger
        await withDiscardingTaskGroup { group in
            do {
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        connections.handedOver(connection.channel)
                        group.addTask { await channel.handle(value: connection, logger: logger) }
                    }
                }
            } catch {
                if lifecycle.phase < .closing { logger.error("accepting connections failed: \(error)") }
            }
        }
    }

    /// Waits for the graceful shutdown, then stops: drain, close the listening socket, let the connections finish.
    private func stopGracefully(server: any Channel, connections: OpenConnections) async {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled: no drain, no wait.
            lifecycle.advance(to: .closing)
            server.close(promise: nil)
            connections.closeAll()
            return
        }
        lifecycle.shutdownBegan()
        if settings.drainPeriod > .zero {
            logger.info(
                "stopping: /ready answers 503; still serving for the drain period (http.drain_period) before closing the listening socket",
                metadata: ["drain_ms": .stringConvertible(settings.drainPeriod.milliseconds)]
            )
            if !(await lifecycle.drain(for: settings.drainPeriod, clock: clock)) {
                logger.info("drain period cut short (a second stop signal)")
            }
        }
        lifecycle.advance(to: .closing)
        // No more accepts; the connections accepted already finish their set-up (NIO would close one that finished it
        // after the listening channel closed), then the listening channel closes.
        await connections.stopAccepting(server, within: .seconds(2), clock: clock)
        try? await server.close()
        let open = connections.quiesce()
        logger.info(
            "stopped accepting connections; answering the requests in flight, then closing every connection (push channels with 1012)",
            metadata: ["connections": .stringConvertible(open)]
        )
        if await connections.waitUntilClosed(within: settings.finishLimit, clock: clock) {
            logger.info("every connection closed")
        } else {
            logger.warning(
                "connections still open after the stop's limit: closing them as they are",
                metadata: ["connections": .stringConvertible(connections.count)]
            )
            connections.closeAll()
        }
    }

    private func bind(_ connections: OpenConnections) async throws -> NIOAsyncChannel<PushRelayHTTPChannel.Value, Never> {
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(ChannelOptions.backlog, value: settings.backlog)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .serverChannelInitializer { server in
                server.eventLoop.makeCompletedFuture { try server.pipeline.syncOperations.addHandler(connections.handler()) }
            }
        let channel = self.channel
        let logger = self.logger
        let initialize: @Sendable (any Channel) -> EventLoopFuture<PushRelayHTTPChannel.Value> = { child in
            channel.setup(channel: child, logger: logger)
        }
        switch settings.listen {
        case .address(let host, let port):
            return try await bootstrap.bind(host: host, port: port, serverBackPressureStrategy: nil, childChannelInitializer: initialize)
        case .inherited(let fd):
            let server = try await bootstrap.bind(fd, serverBackPressureStrategy: nil, childChannelInitializer: initialize)
            // NIO listens again with its own backlog on a socket it is given; the passed socket's queue must hold
            // every connection that arrives while no process accepts.
            _ = listen(fd, settings.inheritedBacklog)
            return server
        }
    }
}

extension HTTPListener {
    /// `127.0.0.1:8080`, `[::1]:8080`, `unix:/run/pushrelay.sock`.
    package static func describe(_ address: SocketAddress) -> String {
        if case .unixDomainSocket = address { return "unix:" + (address.pathname ?? "?") }
        let ip = address.ipAddress ?? "?"
        return (ip.contains(":") ? "[\(ip)]" : ip) + ":\(address.port ?? 0)"
    }

    /// What to warn of when the server listens on a Unix socket (a socket unit's `ListenStream=` with a path): its
    /// clients have no IP address, so every per-address bound (failed credential checks, channels per address, the
    /// relay's sender limit, the dispatcher's waiting lines) counts them all as one client, `unknown`, and no
    /// forwarding header is believed from it, `http.trusted_proxies` or not; the connection budget does not count
    /// them at all. Nil for an IP socket.
    package static func unixSocketWarning(_ address: SocketAddress?) -> String? {
        guard case .unixDomainSocket? = address else { return nil }
        return "listening on a Unix socket: its clients have no address, so the per-address bounds (failed credential "
            + "checks, channel.max_channels_per_address, relay.max_requests_per_minute_per_address) count every client "
            + "as one and http.max_connections_per_address does not apply; forwarding headers are not read from it "
            + "(http.trusted_proxies takes IP addresses). Listen on a TCP address behind the reverse proxy instead "
            + "(docs/deployment.md)"
    }
}

/// The listening socket closed without a stop.
struct ListenerClosed: Error, CustomStringConvertible {
    package var address: String
    package var description: String { "the listening socket \(address) closed unexpectedly" }
}

extension Duration {
    /// Whole milliseconds.
    package var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
