import PushRelayServerMetrics
/// The push channel's figures, read when asked (`/metrics`, the console's overview).
struct PushChannelFigures: Sendable {
    let hub: PushChannelHub
    let sockets: PushChannelSockets

    var connections: Int { sockets.count }
    var subscriptions: Int { hub.channels.count }
    var unconfirmed: Int { hub.confirmations.count }

    /// The figures as `/metrics` gauges.
    var probes: [PushRelayMetrics.Probe] {
        [
            .init(name: "pushrelay_channel_connections", help: "Open websocket connections.") { Double(connections) },
            .init(name: "pushrelay_channel_subscriptions", help: "Live push-notification channels.") { Double(subscriptions) },
            .init(name: "pushrelay_channel_unconfirmed", help: "Channel messages waiting for a confirm.") { Double(unconfirmed) },
        ]
    }
}
