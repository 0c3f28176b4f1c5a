import NIOCore
import NIOPosix
import NIOSSL
import PushRelayCore

/// The HTTP/2 connections of one provider, by origin: up to `connectionsPerOrigin` each, opened on first use and
/// replaced once they stop taking requests. Requests that arrive while a connection is being opened wait for it.
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
        var slots: [UpstreamOrigin: [Slot]] = [:]
        var nextID = 0
        var turn = 0
        var shutDown = false
        /// Made at the first connection: a provider that never sends does not load the trust store.
        var tls: NIOSSLContext?
    }

    private let state = Locked(State())
    private let tlsConfiguration: TLSConfiguration
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let connectionsPerOrigin: Int

    init(tls: TLSConfiguration, group: any EventLoopGroup, connectTimeout: TimeAmount, idleTimeout: TimeAmount, connectionsPerOrigin: Int) {
        self.tlsConfiguration = tls
        self.group = group
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.connectionsPerOrigin = max(1, connectionsPerOrigin)
    }

    /// A connection to `origin` that takes new requests (opening one when there is none, or fewer than allowed).
    /// Throws `UpstreamHTTP2Connection.ConnectError`, NIO's connect and TLS errors, or `CancellationError` after
    /// `shutdown`.
    func connection(to origin: UpstreamOrigin) async throws -> UpstreamHTTP2Connection {
        let (pick, opening, tls): (Slot, EventLoopPromise<UpstreamHTTP2Connection>?, NIOSSLContext?) = try state.withLock { state in
            if state.shutDown { throw CancellationError() }
            var slots = state.slots[origin, default: []]
            slots.removeAll { if case .ready(_, let c) = $0 { return !c.isUsable } else { return false } }
            var opening: EventLoopPromise<UpstreamHTTP2Connection>?
            let slot: Slot
            if slots.count < connectionsPerOrigin {
                if state.tls == nil { state.tls = try NIOSSLContext(configuration: tlsConfiguration) }
                state.nextID += 1
                let promise = group.next().makePromise(of: UpstreamHTTP2Connection.self)
                opening = promise
                slot = .connecting(id: state.nextID, promise.futureResult)
                slots.append(slot)
            } else {
                state.turn &+= 1
                slot = slots[state.turn % slots.count]
            }
            state.slots[origin] = slots
            return (slot, opening, state.tls)
        }
        if let opening, let tls, case .connecting(let id, _) = pick {
            open(origin, id: id, tls: tls, into: opening)
        }
        switch pick {
        case .ready(_, let connection):
            return connection
        case .connecting(_, let future):
            return try await future.get()
        }
    }

    /// Connects on the promise's event loop; the slot becomes ready, or goes away when connecting failed.
    private func open(_ origin: UpstreamOrigin, id: Int, tls: NIOSSLContext, into promise: EventLoopPromise<UpstreamHTTP2Connection>) {
        let future = UpstreamHTTP2Connection.connect(
            to: origin,
            tls: tls,
            eventLoop: promise.futureResult.eventLoop,
            timeout: connectTimeout,
            idleTimeout: idleTimeout
        )
        future.whenComplete { [state] result in
            let closeNow: UpstreamHTTP2Connection? = state.withLock { state in
                guard var slots = state.slots[origin], let index = slots.firstIndex(where: { $0.id == id }) else {
                    return try? result.get()
                }
                switch result {
                case .success(let connection):
                    slots[index] = .ready(id: id, connection)
                case .failure:
                    slots.remove(at: index)
                }
                state.slots[origin] = slots
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
            return state.slots.values.flatMap { $0 }
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
