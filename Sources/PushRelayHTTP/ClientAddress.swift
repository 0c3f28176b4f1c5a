import HTTPTypes
import NIOCore
import PushRelayCore

/// The address of the client whose request is being served: the connection's peer, or the client a trusted proxy's
/// forwarding headers name (`http.trusted_proxies`). Bound by the HTTP layer for the task serving the request; the
/// dispatcher's waiting lines are kept per client with it (`ProviderGate`). Nil for work no request started.
///
/// `peer(of:)` and `client(peer:forwardedFor:forwarded:proxies:)` are the one reading of a request's client, for the
/// router (`PushRelayRequestContext`, `ClientAddressMiddleware`), the fast path (`NotifyFastPath`) and the websocket
/// upgrade (`PushRelayHTTPChannel`).
package enum ClientAddress {
    @TaskLocal package static var current: String?

    /// The connection's peer: its IP address without the port, or "unknown" (a peer without one, a Unix socket).
    package static func peer(of channel: any Channel) -> String {
        channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The client of a request that came from `peer` with these forwarding headers' values: the peer, or, when the
    /// peer is a trusted proxy, the client its `X-Forwarded-For` or `Forwarded` header names.
    package static func client(
        peer: String,
        forwardedFor: @autoclosure () -> [String],
        forwarded: @autoclosure () -> [String],
        proxies: TrustedProxies
    )
        -> String
    {
        guard proxies.trusts(peer) else { return peer }
        return proxies.clientAddress(peer: peer, forwardedFor: forwardedFor(), forwarded: forwarded())
    }

    /// The client of a request that came from `peer` with `headers`.
    package static func client(peer: String, headers: HTTPFields, proxies: TrustedProxies) -> String {
        client(peer: peer, forwardedFor: headers[values: .xForwardedFor], forwarded: headers[values: .forwarded], proxies: proxies)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name(TrustedProxies.forwardedForHeader)!
    package static let forwarded = HTTPField.Name(TrustedProxies.forwardedHeader)!
}
