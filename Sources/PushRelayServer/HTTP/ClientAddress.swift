import HTTPTypes
import PushRelayCore

/// The address of the client whose request is being served: the connection's peer, or the client a trusted proxy's
/// forwarding headers name (`http.trusted_proxies`). Bound by the HTTP layer for the task serving the request; the
/// dispatcher's waiting lines are kept per client with it (`ProviderGate`). Nil for work no request started.
enum ClientAddress {
    @TaskLocal static var current: String?
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name(TrustedProxies.forwardedForHeader)!
    static let forwarded = HTTPField.Name(TrustedProxies.forwardedHeader)!
}

extension TrustedProxies {
    /// The client of a request that came from `peer` with `headers`: the peer, or, when the peer is a trusted proxy,
    /// the client its `X-Forwarded-For` or `Forwarded` header names. The one rule for the router
    /// (`ClientAddressMiddleware`) and the pipeline (`NotifyFastPath`).
    func client(peer: String, headers: HTTPFields) -> String {
        guard trusts(peer) else { return peer }
        return clientAddress(peer: peer, forwardedFor: headers[values: .xForwardedFor], forwarded: headers[values: .forwarded])
    }
}
