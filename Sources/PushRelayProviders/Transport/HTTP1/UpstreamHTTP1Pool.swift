import NIOCore
import NIOPosix
import NIOSSL
import PushRelayCore

/// The HTTP/1.1 connections of one provider, up to `maxConnections` per origin, each carrying one request at a time.
///
/// A request takes the connection that finished last (so that the others idle out), opens a new one while the origin
/// has fewer than `maxConnections`, or else waits, first come first served, for the first connection to come free;
/// a request still waiting at its deadline fails with `UpstreamStreamFailure.timedOut`. An origin with no connection
/// and no waiting request is forgotten, so the pool holds nothing for the WebPush services it no longer sends to.
final class UpstreamHTTP1Pool: Sendable {
    private struct Waiting {
        var id: Int
        var request: UpstreamRequest
        var deadline: ContinuousClock.Instant
        var promise: EventLoopPromise<UpstreamResponse>
    }

    private struct Origin {
        /// Connections open or being opened.
        var open = 0
        /// Connections that take a request now, the one that finished last at the end.
        var idle: [UpstreamHTTP1Connection] = []
        var waiting = CircularBuffer<Waiting>()
        /// The one timer that fails waiting requests at their deadlines, armed for the earliest while any waits.
        var expiry: (deadline: ContinuousClock.Instant, timer: ScheduledTimer)?

        var isEmpty: Bool { open == 0 && idle.isEmpty && waiting.isEmpty }
    }

    private struct State {
        var origins: [UpstreamOrigin: Origin] = [:]
        var live: [ObjectIdentifier: UpstreamHTTP1Connection] = [:]
        var nextID = 0
        var shutDown = false
        /// Made at the first secure connection: a provider that never sends does not load the trust store.
        var tls: NIOSSLContext?

        /// Runs `body` on the books of `origin` in place (a copy would copy every waiting request), and forgets the
        /// origin when nothing is left in them.
        mutating func withOrigin<Result>(_ origin: UpstreamOrigin, _ body: (inout Origin) -> Result) -> Result {
            let result = body(&origins[origin, default: Origin()])
            if origins[origin]?.isEmpty == true { origins[origin] = nil }
            return result
        }
    }

    /// What a request does once the pool's books are updated (outside the lock).
    private enum Step {
        case run(UpstreamHTTP1Connection)
        case connect(NIOSSLContext?)
        case wait(EventLoopFuture<UpstreamResponse>)
        case fail(any Error)
    }

    private let state = Locked(State())
    private let tlsConfiguration: TLSConfiguration
    private let group: any EventLoopGroup
    private let maxConnections: Int
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let clock: any TimePort
    private let resolver: ProviderResolver

    /// - Parameters:
    ///   - clock: what deadlines are measured on, and where the connections' and the waits' timers run.
    ///   - resolver: asked for the host's addresses at each new connection (one for a request without
    ///     `connectAddresses`).
    init(
        tls: TLSConfiguration,
        group: any EventLoopGroup,
        maxConnections: Int,
        connectTimeout: TimeAmount,
        idleTimeout: TimeAmount,
        clock: any TimePort,
        resolver: ProviderResolver = .system
    ) {
        self.tlsConfiguration = tls
        self.group = group
        self.maxConnections = max(1, maxConnections)
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.clock = clock
        self.resolver = resolver
    }

    /// Connections open or being opened to `origin` (for tests).
    func openConnections(to origin: UpstreamOrigin) -> Int { state.withLock { $0.origins[origin]?.open ?? 0 } }

    /// Sends `request` on a connection to its origin and returns its answer. Fails with `UpstreamStreamFailure`, with
    /// `UpstreamConnectError.timedOut`, NIO's connect and TLS errors, or `CancellationError` after
    /// `shutdown`. `deadline` is on the pool's clock.
    func execute(_ request: UpstreamRequest, deadline: ContinuousClock.Instant) -> EventLoopFuture<UpstreamResponse> {
        let origin = request.origin
        let step: Step = state.withLock { state in
            if state.shutDown { return .fail(CancellationError()) }
            let tls: NIOSSLContext?
            do {
                tls = origin.secure ? try Self.tls(&state, tlsConfiguration) : nil
            } catch {
                return .fail(error)
            }
            state.nextID += 1
            let id = state.nextID
            return state.withOrigin(origin) { entry in
                while let connection = entry.idle.popLast() {
                    if connection.isUsable { return .run(connection) }
                }
                if entry.open < maxConnections {
                    entry.open += 1
                    return .connect(tls)
                }
                // On the caller's event loop when it is on one: no other thread is woken for the promise.
                let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? group.next()
                let promise = loop.makePromise(of: UpstreamResponse.self)
                entry.waiting.append(Waiting(id: id, request: request, deadline: deadline, promise: promise))
                if entry.expiry.map({ deadline < $0.deadline }) ?? true {
                    entry.expiry?.timer.cancel()
                    entry.expiry = (deadline, expiryTimer(origin: origin, at: deadline, on: loop))
                }
                return .wait(promise.futureResult)
            }
        }
        switch step {
        case .run(let connection):
            return run(request, deadline: deadline, on: connection)
        case .connect(let tls):
            let promise = group.next().makePromise(of: UpstreamResponse.self)
            open(origin, tls: tls, for: request, deadline: deadline, promise: promise)
            return promise.futureResult
        case .wait(let future):
            return future
        case .fail(let error):
            return group.next().makeFailedFuture(error)
        }
    }

    /// Closes every connection and fails the waiting requests; later requests fail.
    func shutdown() async {
        let (connections, waiting) = state.withLock { state in
            state.shutDown = true
            let waiting = state.origins.values.flatMap { $0.waiting }
            defer {
                state.origins = [:]
                state.live = [:]
            }
            return (Array(state.live.values), waiting)
        }
        for entry in waiting {
            entry.promise.fail(CancellationError())
        }
        for connection in connections {
            connection.close()
            try? await connection.channel.closeFuture.get()
        }
    }

    private static func tls(_ state: inout State, _ configuration: TLSConfiguration) throws -> NIOSSLContext {
        if let tls = state.tls { return tls }
        let tls = try NIOSSLContext(configuration: configuration)
        state.tls = tls
        return tls
    }

    /// At `deadline`, fails the requests of `origin` still waiting at their deadlines, and arms itself again for the
    /// earliest of the others.
    private func expiryTimer(origin: UpstreamOrigin, at deadline: ContinuousClock.Instant, on eventLoop: any EventLoop) -> ScheduledTimer {
        clock.schedule(after: clock.instant.duration(to: deadline), on: eventLoop) { [self] in
            let now = clock.instant
            let expired: [Waiting] = state.withLock { state in
                state.withOrigin(origin) { entry in
                    guard entry.expiry?.deadline == deadline else { return [] }
                    entry.expiry = nil
                    var expired: [Waiting] = []
                    var kept = CircularBuffer<Waiting>(initialCapacity: entry.waiting.count)
                    for waiting in entry.waiting {
                        if waiting.deadline <= now { expired.append(waiting) } else { kept.append(waiting) }
                    }
                    entry.waiting = kept
                    if let next = kept.map(\.deadline).min() {
                        entry.expiry = (next, expiryTimer(origin: origin, at: next, on: eventLoop))
                    }
                    return expired
                }
            }
            for waiting in expired { waiting.promise.fail(UpstreamStreamFailure.timedOut) }
        }
    }

    private func run(
        _ request: UpstreamRequest,
        deadline: ContinuousClock.Instant,
        on connection: UpstreamHTTP1Connection
    ) -> EventLoopFuture<UpstreamResponse> {
        let answer = connection.execute(request, deadline: deadline)
        answer.whenComplete { [self] _ in release(connection, origin: request.origin) }
        return answer
    }

    /// Connects for `request`; once connected, the connection is the pool's and the request runs on it.
    private func open(
        _ origin: UpstreamOrigin,
        tls: NIOSSLContext?,
        for request: UpstreamRequest,
        deadline: ContinuousClock.Instant,
        promise: EventLoopPromise<UpstreamResponse>
    ) {
        UpstreamHTTP1Connection.connect(
            to: origin,
            at: request.connectAddresses,
            tls: tls,
            eventLoop: promise.futureResult.eventLoop,
            timeout: min(connectTimeout, max(TimeAmount(clock.instant.duration(to: deadline)), .milliseconds(1))),
            idleTimeout: idleTimeout,
            clock: clock,
            resolver: resolver
        ).whenComplete { [self] result in
            switch result {
            case .success(let connection):
                let kept = state.withLock { state in
                    guard !state.shutDown else { return false }
                    state.live[ObjectIdentifier(connection)] = connection
                    return true
                }
                guard kept else {
                    connection.close()
                    promise.fail(CancellationError())
                    return
                }
                connection.channel.closeFuture.whenComplete { [self] _ in closed(connection, origin: origin) }
                run(request, deadline: deadline, on: connection).cascade(to: promise)
            case .failure(let error):
                promise.fail(error)
                connectionGone(origin)
            }
        }
    }

    /// An exchange is over: a usable connection takes the first waiting request or goes idle. One that is not usable
    /// is closing; `closed` does its books.
    private func release(_ connection: UpstreamHTTP1Connection, origin: UpstreamOrigin) {
        guard connection.isUsable else { return }
        let waiting: Waiting? = state.withLock { state in
            guard !state.shutDown else { return nil }
            return state.withOrigin(origin) { entry in
                if let first = entry.waiting.popFirst() { return first }
                entry.idle.append(connection)
                return nil
            }
        }
        guard let waiting else { return }
        run(waiting.request, deadline: waiting.deadline, on: connection).cascade(to: waiting.promise)
    }

    private func closed(_ connection: UpstreamHTTP1Connection, origin: UpstreamOrigin) {
        state.withLock { state in
            state.live[ObjectIdentifier(connection)] = nil
            state.origins[origin]?.idle.removeAll { $0 === connection }
        }
        connectionGone(origin)
    }

    /// A connection to `origin` is gone (closed, or never opened): the first waiting request opens another.
    private func connectionGone(_ origin: UpstreamOrigin) {
        let step: (Waiting, NIOSSLContext?)? = state.withLock { state in
            guard state.origins[origin] != nil else { return nil }
            let shutDown = state.shutDown
            let tls = origin.secure ? state.tls : nil
            return state.withOrigin(origin) { entry in
                entry.open -= 1
                guard !shutDown, entry.open < maxConnections, let first = entry.waiting.popFirst() else { return nil }
                entry.open += 1
                return (first, tls)
            }
        }
        guard let (waiting, tls) = step else { return }
        open(origin, tls: tls, for: waiting.request, deadline: waiting.deadline, promise: waiting.promise)
    }
}
