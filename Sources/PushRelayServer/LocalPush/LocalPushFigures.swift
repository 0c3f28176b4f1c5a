import PushRelayCore

/// The websocket channel's figures for `/metrics`. The metrics exist before the hub (the dispatcher records into them
/// and the hub's cloud route needs the dispatcher), so the hub is attached once it is built; until then every figure is 0.
final class LocalPushGauges: Sendable {
    private let parts = Locked<(hub: LocalPushHub, sockets: LocalPushSockets)?>(nil)

    func attach(hub: LocalPushHub, sockets: LocalPushSockets) {
        parts.withLock { $0 = (hub, sockets) }
    }

    var connections: Int { parts.withLock { $0 }?.sockets.count ?? 0 }
    var subscriptions: Int { parts.withLock { $0 }?.hub.channels.count ?? 0 }
    var unconfirmed: Int { parts.withLock { $0 }?.hub.confirmations.count ?? 0 }
}
