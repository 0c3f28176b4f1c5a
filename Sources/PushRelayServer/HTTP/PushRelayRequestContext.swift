import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of every PushRelay route: Hummingbird's core storage, the websocket upgrade slot, and the
/// peer address (for per-address limits such as failed websocket authentications).
public struct PushRelayRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    /// The client's IP address, without the port ("unknown" for non-IP peers).
    public let peerAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
