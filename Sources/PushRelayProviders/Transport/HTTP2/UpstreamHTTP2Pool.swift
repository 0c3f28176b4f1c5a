import NIOCore
import NIOPosix
import NIOSSL
import PushRelayCore

/// The HTTP/2 connections of one provider, by origin: at most one per event loop of the group, opened on first use
/// and replaced once they stop taking requests. A request started on an event loop (as every request is where NIO
/// runs Swift's tasks, as `pushrelay` sets up) takes that loop's connection, so the request, its stream and the task
/// that awaits the answer stay on one thread; a request from elsewhere takes the first connection there is.
/// Requests that arrive while their connection is being opened wait for it.
final class UpstreamHTTP2Pool: Sendable {
    private enum Slot {
        case empty
        case connecting(id: Int, EventLoopFuture<UpstreamHTTP2Connection>)
        case ready(id: Int, UpstreamHTTP2Connection)

        var id: Int? {
            switch self {
            case .empty: nil
            case .connecting(let id, _), .ready(let id, _): id
            }
        }

        /// A slot a new request may use (or wait on).
        var isLive: Bool {
            switch self {
            case .empty: false
            case .connecting: true
            case .ready(_, let connection): connection.isUsable
            }
        }
    }

    private struct State {
        /// Per origin, one slot per event loop (index as in `loops`).
        var slots: [UpstreamOrigin: [Slot]] = [:]
        var nextID = 0
        var shutDown = false
    }

    private let state = Locked(State())
    private let tls: NIOSSLContext
    private let loops: [any EventLoop]
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount

    /// - Parameter maxConnectionsPerOrigin: at most this many connections per origin (and one per event loop).
    init(tls: NIOSSLContext, group: any EventLoopGroup, connectTimeout: TimeAmount, idleTimeout: TimeAmount, maxConnectionsPerOrigin: Int) {
        self.tls = tls
        self.loops = Array(group.makeIterator().prefix(max(1, maxConnectionsPerOrigin)))
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
    }

    /// A connection to `origin` that takes new requests: the current event loop's, or the first live one for a caller
    /// on no event loop of the group (opening one when there is none).
    /// Throws `UpstreamHTTP2Connection.ConnectError`, NIO's connect errors, or `CancellationError` after `shutdown`.
    func connection(to origin: UpstreamOrigin) async throws -> UpstreamHTTP2Connection {
        let here = loops.firstIndex { $0.inEventLoop }
        let (pick, opening): (Slot, EventLoopPromise<UpstreamHTTP2Connection>?) = try state.withLock { state in
            if state.shutDown { throw CancellationError() }
            var slots = state.slots[origin] ?? Array(repeating: .empty, count: loops.count)
            let index = here ?? slots.firstIndex { $0.isLive } ?? 0
            if slots[index].isLive { return (slots[index], nil) }
            state.nextID += 1
            let promise = loops[index].makePromise(of: UpstreamHTTP2Connection.self)
            slots[index] = .connecting(id: state.nextID, promise.futureResult)
            state.slots[origin] = slots
            return (slots[index], promise)
        }
        if let opening, case .connecting(let id, _) = pick {
            open(origin, id: id, into: opening)
        }
        switch pick {
        case .ready(_, let connection):
            return connection
        case .connecting(_, let future):
            return try await future.get()
        case .empty:
            preconditionFailure("an empty slot is never picked")
        }
    }

    /// Connects on the promise's event loop; the slot becomes ready, or goes away when connecting failed.
    private func open(_ origin: UpstreamOrigin, id: Int, into promise: EventLoopPromise<UpstreamHTTP2Connection>) {
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
                    slots[index] = .empty
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
            case .empty:
                break
            }
        }
    }
}
