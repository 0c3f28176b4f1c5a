import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushRelayCore

/// One TLS connection to a provider that speaks HTTP/2 (ALPN `h2`), carrying many requests at once.
///
/// `connect` opens it; `execute` sends a request as a new stream, from the connection's event loop directly, from
/// anywhere else with one hop to it.
/// Once the server sends GOAWAY, the connection closes or the stream IDs run out, `isUsable` turns false and the pool
/// opens another; requests already on it still finish.
typealias UpstreamHTTP2Connection = UpstreamConnection<UpstreamHTTP2Handler>

extension UpstreamConnection where Handler == UpstreamHTTP2Handler {
    /// Opens a connection to `origin` (TCP, TLS with ALPN `h2`, HTTP/2 preface, the server's SETTINGS) on `eventLoop`,
    /// within `timeout`; at the first of `addresses` when there are any, else wherever `resolver` says the origin's host
    /// is now. Its timers run on `clock`.
    static func connect(
        to origin: UpstreamOrigin,
        at addresses: [SocketAddress] = [],
        tls: NIOSSLContext,
        eventLoop: any EventLoop,
        timeout: TimeAmount,
        idleTimeout: TimeAmount,
        clock: any TimePort,
        events: UpstreamConnectionEvents = UpstreamConnectionEvents(),
        resolver: ProviderResolver = .system
    ) -> EventLoopFuture<UpstreamHTTP2Connection> {
        open(to: origin, at: addresses, eventLoop: eventLoop, timeout: timeout, clock: clock, resolver: resolver) { channel, usable, ready in
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: origin.serverName))
            // A failed handshake (an untrusted certificate, say) fails the connection with its own error.
            try sync.addHandler(ConnectFailureHandler(ready: ready))
            try sync.addHandler(
                ApplicationProtocolNegotiationHandler { result, channel in
                    guard case .negotiated("h2") = result else {
                        ready.fail(UpstreamConnectError.http2NotOffered)
                        return channel.close()
                    }
                    return channel.eventLoop.makeCompletedFuture {
                        let handler = UpstreamHTTP2Handler(
                            clock: clock,
                            idleTimeout: Duration(idleTimeout),
                            onDead: { waiting in events.dead(origin, waiting) },
                            onGoAway: events.goAway
                        ) { usable.value.store(false, ordering: .relaxed) }
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(NIOHTTP2Handler(mode: .client, initialSettings: UpstreamHTTP2Handler.settings))
                        try sync.addHandler(handler)
                        // Ready once the server's first SETTINGS frame is in: until then the client would take the
                        // server's stream cap for unlimited, and a server that starts low (APNs at one stream, nghttp2
                        // wherever it is set) refuses every stream over it.
                        let connection = UpstreamHTTP2Connection(channel: channel, handler: handler, usable: usable)
                        handler.whenSettingsReceived { ready.succeed(connection) }
                    }
                }
            )
        }
    }
}
