import Hummingbird
import NIOCore

/// The request context of every PushRelay route: Hummingbird's core storage, and the
/// peer address (for per-address limits such as failed websocket authentications).
public struct PushRelayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address, without the port ("unknown" for non-IP peers): the connection's peer, or, when that is
    /// a trusted proxy (`http.trusted_proxies`), the client its forwarding headers name (`ClientAddressMiddleware`).
    public var peerAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = ClientAddress.peer(of: source.channel)
    }
}

/// A request context that knows the client's address: what per-address limits (failed credential checks) count by.
public protocol PeerAddressContext: RequestContext {
    var peerAddress: String { get set }
}

extension PushRelayRequestContext: PeerAddressContext {}
