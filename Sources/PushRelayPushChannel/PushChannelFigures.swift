import PushRelayServerMetrics

/// The push channel's figures, read when asked (`/metrics`, the console's overview).
package struct PushChannelFigures: Sendable {
    package let hub: PushChannelHub
    package let sockets: PushChannelSockets

    package init(hub: PushChannelHub, sockets: PushChannelSockets) {
        self.hub = hub
        self.sockets = sockets
    }

    package var connections: Int { sockets.count }
    package var subscriptions: Int { hub.channels.count }
    package var unconfirmed: Int { hub.confirmations.count }

    /// The figures as `/metrics` gauges.
    package var probes: [PushRelayMetrics.Probe] {
        [
            .init(name: "pushrelay_channel_connections", help: "Open websocket connections.") { Double(connections) },
            .init(name: "pushrelay_channel_subscriptions", help: "Live push-notification channels.") { Double(subscriptions) },
            .init(name: "pushrelay_channel_unconfirmed", help: "Channel messages waiting for a confirm.") { Double(unconfirmed) },
        ]
    }
}
