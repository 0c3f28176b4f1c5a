import NIOCore
import NIOPosix
import NIOSSL
import PushRelayCore

/// The HTTP/2 connection of one provider to each origin: opened on first use and replaced once it stops taking
/// requests. Requests that arrive while it is being opened wait for it.
///
/// One connection carries hundreds of requests at once and its writes are flushed together; one connection per event
/// loop measured no better (`Benchmarks/README.md`).
final class UpstreamHTTP2Pool: Sendable {
    private enum Slot {
        case connecting(id: Int, EventLoopFuture<UpstreamHTTP2Connection>)
        case ready(id: Int, UpstreamHTTP2Connection)

        var id: Int {
            switch self {
            case .connecting(let id, _), .ready(let id, _): id
            }
        }
    }

    private struct State {
        var slots: [UpstreamOrigin: Slot] = [:]
        var nextID = 0
        var shutDown = false
        /// Made at the first connection: a provider that never sends does not load the trust store.
        var tls: NIOSSLContext?
    }

    private let state = Locked(State())
    private let tlsConfiguration: TLSConfiguration
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let clock: any TimePort
    private let events: UpstreamConnectionEvents
    private let resolver: ProviderResolver

    /// - Parameters:
    ///   - clock: where the connections' timers run (connect, deadlines, pings, idle).
    ///   - resolver: asked for the host's addresses at each new connection (one without `addresses`).
    init(
        tls: TLSConfiguration,
        group: any EventLoopGroup,
        connectTimeout: TimeAmount,
        idleTimeout: TimeAmount,
        clock: any TimePort,
        events: UpstreamConnectionEvents = UpstreamConnectionEvents(),
        resolver: ProviderResolver = .system
    ) {
        self.tlsConfiguration = tls
        self.group = group
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.clock = clock
        self.events = events
        self.resolver = resolver
    }

    /// The connection to `origin` that takes new requests, opening one (at the first of `addresses` when there are
    /// any) when there is none.
    /// Throws `UpstreamConnectError`, NIO's connect and TLS errors, or `CancellationError` after
    /// `shutdown`.
    func connection(to origin: UpstreamOrigin, at addresses: [SocketAddress] = []) async throws -> UpstreamHTTP2Connection {
        let (slot, opening): (Slot, (EventLoopPromise<UpstreamHTTP2Connection>, NIOSSLContext)?) = try state.withLock { state in
            if state.shutDown { throw CancellationError() }
            switch state.slots[origin] {
            case .ready(let id, let connection) where connection.isUsable:
                return (.ready(id: id, connection), nil)
            case .connecting(let id, let future):
                return (.connecting(id: id, future), nil)
            case .ready, nil:
                if state.tls == nil { state.tls = try NIOSSLContext(configuration: tlsConfiguration) }
                state.nextID += 1
                let promise = group.next().makePromise(of: UpstreamHTTP2Connection.self)
                let slot = Slot.connecting(id: state.nextID, promise.futureResult)
                state.slots[origin] = slot
                return (slot, (promise, state.tls!))
            }
        }
        if let (promise, tls) = opening {
            open(origin, at: addresses, id: slot.id, tls: tls, into: promise)
        }
        switch slot {
        case .ready(_, let connection):
            return connection
        case .connecting(_, let future):
            return try await future.get()
        }
    }

    /// Connects on the promise's event loop; the slot becomes ready, or goes away when connecting failed.
    private func open(
        _ origin: UpstreamOrigin,
        at addresses: [SocketAddress],
        id: Int,
        tls: NIOSSLContext,
        into promise: EventLoopPromise<UpstreamHTTP2Connection>
    ) {
        let future = UpstreamHTTP2Connection.connect(
            to: origin,
            at: addresses,
            tls: tls,
            eventLoop: promise.futureResult.eventLoop,
            timeout: connectTimeout,
            idleTimeout: idleTimeout,
            clock: clock,
            events: events,
            resolver: resolver
        )
        future.whenComplete { [state] result in
            let closeNow: UpstreamHTTP2Connection? = state.withLock { state in
                guard let slot = state.slots[origin], slot.id == id else {
                    // Shut down (or replaced) while connecting: nobody will use this connection.
                    return try? result.get()
                }
                switch result {
                case .success(let connection):
                    state.slots[origin] = .ready(id: id, connection)
                case .failure:
                    state.slots[origin] = nil
                }
                return nil
            }
            closeNow?.close()
        }
        future.cascade(to: promise)
    }

    /// Closes every connection; later requests fail.
    func shutdown() async {
        let slots = state.withLock { state in
            state.shutDown = true
            defer { state.slots = [:] }
            return Array(state.slots.values)
        }
        for slot in slots {
            switch slot {
            case .ready(_, let connection):
                connection.close()
                try? await connection.channel.closeFuture.get()
            case .connecting(_, let future):
                if let connection = try? await future.get() {
                    connection.close()
                    try? await connection.channel.closeFuture.get()
                }
            }
        }
    }
}
