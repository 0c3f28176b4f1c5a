import PushRelayCore
import ServiceLifecycle

/// Runs the push channel's background duties: recovers stored channel messages at start, works with the other
/// instances on the database, drops expired queued messages every minute (on the hub's clock), and on shutdown closes the connections still
/// open (the listener's stop has normally closed them already, with 1012) and waits for their disconnects.
package struct PushChannelService: Service {
    package let hub: PushChannelHub
    package let sockets: PushChannelSockets

    package init(hub: PushChannelHub, sockets: PushChannelSockets) {
        self.hub = hub
        self.sockets = sockets
    }
    /// How long shutdown waits for the connections' disconnects: a close frame's answer (`SocketClosing.timeout`),
    /// then each unconfirmed message's release.
    static let disconnectWait = Duration.seconds(10)

    package func run() async throws {
        await withDiscardingTaskGroup { group in
            // Other instances on the same database: heartbeat, hand-offs, dead instances' messages.
            if let instances = hub.instances { group.addTask { await instances.run() } }
            await hub.recover()
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                try? await cancelWhenGracefulShutdown { try await hub.clock.sleep(for: .seconds(60)) }
                _ = try? await hub.store.dropExpired(now: hub.clock.now())
            }
            // The websockets hold no task the server would wait for: say goodbye to each of them, then wait until each
            // one's disconnect has settled its unconfirmed messages (to the cloud, or queued). The providers and the
            // storage stop after this service; a message settled after them would be logged as failed, sent by the
            // cloud route, and sent again by the next start's recovery.
            sockets.closeAll()
            await sockets.waitUntilAllDisconnected(within: Self.disconnectWait, logger: hub.logger)
            group.cancelAll()
        }
    }
}
