import Hummingbird
import NIOCore

/// The request context of every PushRelay route: Hummingbird's core storage, and the
/// peer address (for per-address limits such as failed websocket authentications).
public struct PushRelayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address, without the port ("unknown" for non-IP peers).
    public let peerAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

/// A request context that knows the client's address: what per-address limits (failed credential checks) count by.
public protocol PeerAddressContext: RequestContext {
    var peerAddress: String { get }
}

extension PushRelayRequestContext: PeerAddressContext {}
