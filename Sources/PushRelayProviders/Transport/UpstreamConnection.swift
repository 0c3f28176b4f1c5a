import NIOCore
import NIOPosix
import PushRelayCore
import PushRelayEventLoopClock

/// The handler of one upstream connection, as its `UpstreamConnection` uses it: start a request.
protocol UpstreamExchangeHandler: AnyObject, SendableMetatype {
    /// Sends `request`; `promise` gets the answer or an `UpstreamStreamFailure`. Called on the channel's event loop.
    /// `deadline` is on the handler's clock.
    func start(_ request: UpstreamRequest, deadline: ContinuousClock.Instant, promise: EventLoopPromise<UpstreamResponse>)
}

/// One connection to a provider: its channel, its handler, and whether it takes new requests. HTTP/2 and HTTP/1.1
/// connections are this type with their own handler (`UpstreamHTTP2Connection`, `UpstreamHTTP1Connection`); their
/// `connect` says how each is opened.
///
/// `execute` sends a request from the connection's event loop directly, from anywhere else with one hop to it.
final class UpstreamConnection<Handler: UpstreamExchangeHandler>: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<Handler>
    private let usable: UsableFlag

    init(channel: any Channel, handler: Handler, usable: UsableFlag) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.usable = usable
    }

    /// False once the connection takes no new requests.
    var isUsable: Bool { usable.value.load(ordering: .relaxed) }

    /// Sends `request`. The future fails with `UpstreamStreamFailure` when no answer came.
    func execute(_ request: UpstreamRequest, deadline: ContinuousClock.Instant) -> EventLoopFuture<UpstreamResponse> {
        let promise = channel.eventLoop.makePromise(of: UpstreamResponse.self)
        let handler = self.handler
        if channel.eventLoop.inEventLoop {
            handler.value.start(request, deadline: deadline, promise: promise)
        } else {
            channel.eventLoop.execute { handler.value.start(request, deadline: deadline, promise: promise) }
        }
        return promise.futureResult
    }

    func close() {
        usable.value.store(false, ordering: .relaxed)
        channel.close(promise: nil)
    }
}

extension UpstreamConnection {
    /// Opens a channel to `origin` on `eventLoop` (to `addresses` one after another when there are any, else wherever
    /// `resolver` says the host is now) and completes with the connection `prepare` builds in its pipeline.
    ///
    /// `prepare` runs in each channel's initializer with that channel's own `UsableFlag` (a failed attempt at an earlier
    /// address leaves the next one untouched) and the promise it completes once the connection is ready. The promise
    /// fails after `timeout` (`UpstreamConnectError.timedOut`), when the connect fails, or when the channel closes
    /// first; a channel whose promise failed is closed. `timeout` runs on `clock`.
    static func open(
        to origin: UpstreamOrigin,
        at addresses: [SocketAddress],
        eventLoop: any EventLoop,
        timeout: TimeAmount,
        clock: any TimePort,
        resolver: ProviderResolver,
        prepare: @escaping @Sendable (any Channel, UsableFlag, EventLoopPromise<UpstreamConnection>) throws -> Void
    ) -> EventLoopFuture<UpstreamConnection> {
        let ready = eventLoop.makePromise(of: UpstreamConnection.self)
        let bootstrap: @Sendable () -> ClientBootstrap = {
            ClientBootstrap(group: eventLoop)
                .connectTimeout(timeout)
                .resolver(addresses.isEmpty ? resolver.resolver(on: eventLoop) : nil)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try prepare(channel, UsableFlag(), ready) }
                }
        }
        let timer = clock.schedule(after: Duration(timeout), on: eventLoop) { ready.fail(UpstreamConnectError.timedOut) }
        UpstreamOrigin.connect(bootstrap, to: origin, at: addresses).whenComplete { result in
            switch result {
            case .success(let channel):
                // A handshake that fails or is cut closes the channel before the connection was ready.
                channel.closeFuture.whenComplete { _ in ready.fail(UpstreamStreamFailure.connectionClosed) }
                ready.futureResult.whenFailure { _ in channel.close(promise: nil) }
            case .failure(let error):
                ready.fail(error)
            }
        }
        ready.futureResult.whenComplete { _ in timer.cancel() }
        return ready.futureResult
    }
}

/// Why a connection could not be opened.
enum UpstreamConnectError: Error {
    /// The server finished the TLS handshake without choosing HTTP/2: use HTTP/1.1 for this origin.
    case http2NotOffered
    /// TCP connect and TLS handshake (and the HTTP/2 preface) took longer than allowed.
    case timedOut
}
