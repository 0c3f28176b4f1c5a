import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import PushRelayCore

/// One connection to a provider over HTTP/1.1, plain TCP for `http://` origins or TLS (ALPN `http/1.1`) for
/// `https://`, carrying one request at a time.
///
/// `connect` opens it (the TLS handshake included, so that certificate errors are connection errors); `execute` sends
/// a request from the connection's event loop directly, from anywhere else with one hop to it. Once an answer says
/// `Connection: close`, the deadline of a request passes, the connection breaks or stays idle too long, `isUsable`
/// turns false; the pool then opens another.
typealias UpstreamHTTP1Connection = UpstreamConnection<UpstreamHTTP1Handler>

extension UpstreamConnection where Handler == UpstreamHTTP1Handler {
    /// Opens a connection to `origin` (at the first of `addresses` when there are any, else wherever `resolver` says
    /// its host is now) on `eventLoop` within `timeout`: TCP, then for a secure origin the TLS handshake with `tls`. Fails with
    /// `UpstreamConnectError.timedOut`, NIO's connect errors or the TLS error. Its timers run on `clock`.
    static func connect(
        to origin: UpstreamOrigin,
        at addresses: [SocketAddress] = [],
        tls: NIOSSLContext?,
        eventLoop: any EventLoop,
        timeout: TimeAmount,
        idleTimeout: TimeAmount,
        clock: any TimePort,
        resolver: ProviderResolver = .system
    ) -> EventLoopFuture<UpstreamHTTP1Connection> {
        open(to: origin, at: addresses, eventLoop: eventLoop, timeout: timeout, clock: clock, resolver: resolver) { channel, usable, ready in
            let sync = channel.pipeline.syncOperations
            let handler = UpstreamHTTP1Handler(clock: clock, idleTimeout: Duration(idleTimeout)) {
                usable.value.store(false, ordering: .relaxed)
            }
            let connection = UpstreamHTTP1Connection(channel: channel, handler: handler, usable: usable)
            let secure = origin.secure && tls != nil
            if secure, let tls {
                try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: origin.serverName))
            }
            try sync.addHandler(ConnectFailureHandler(ready: ready))
            // Ready once connected, and for TLS once the handshake is done: a channel whose connect fails (the next
            // address is tried then) never reports ready.
            try sync.addHandler(ConnectionReadyHandler(afterHandshake: secure) { ready.succeed(connection) })
            try sync.addHTTPClientHandlers(leftOverBytesStrategy: .dropBytes)
            try sync.addHandler(handler)
        }
    }
}

/// Calls `done` once the connection is usable: when it is connected, or with `afterHandshake` when its TLS handshake
/// completed.
private final class ConnectionReadyHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let afterHandshake: Bool
    private let done: @Sendable () -> Void

    init(afterHandshake: Bool, done: @escaping @Sendable () -> Void) {
        self.afterHandshake = afterHandshake
        self.done = done
    }

    func channelActive(context: ChannelHandlerContext) {
        if !afterHandshake { done() }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if afterHandshake, case TLSUserEvent.handshakeCompleted = event { done() }
        context.fireUserInboundEventTriggered(event)
    }
}
