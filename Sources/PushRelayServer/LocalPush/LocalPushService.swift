import ServiceLifecycle

/// Runs the websocket channel's background duties: recovers stored channel messages at start, works with the other
/// instances on the database, drops expired queued messages every minute, and closes the connections on shutdown.
struct LocalPushService: Service {
    let hub: LocalPushHub
    let sockets: LocalPushSockets

    func run() async throws {
        await withDiscardingTaskGroup { group in
            // Other instances on the same database: heartbeat, hand-offs, dead instances' messages.
            if let instances = hub.instances { group.addTask { await instances.run() } }
            await hub.recover()
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
                _ = try? await hub.store.dropExpired(now: hub.clock.now())
            }
            // The websockets hold no task the server would wait for: say goodbye to each of them.
            sockets.closeAll()
            group.cancelAll()
        }
    }
}
