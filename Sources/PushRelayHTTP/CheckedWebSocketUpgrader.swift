import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import PushRelayCore
import Synchronization

/// NIO's websocket upgrader behind PushRelay's own check of the request. A refused upgrade is remembered, so that
/// it gets a JSON answer: NIO has consumed the request head by then, and plain HTTP handling would only see its end.
struct CheckedWebSocketUpgrader: NIOTypedHTTPServerProtocolUpgrader {
    /// The one path websockets are served at (`WebSocketEndpoint.path`).
    let path: String
    let refusal: NIOLoopBoundBox<APIError?>
    let inner: NIOTypedWebSocketServerUpgrader<PushRelayHTTPChannel.Upgrade>

    var supportedProtocol: String { inner.supportedProtocol }
    var requiredUpgradeHeaders: [String] { inner.requiredUpgradeHeaders }

    func buildUpgradeResponse(
        channel: any Channel,
        upgradeRequest: HTTPRequestHead,
        initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        if let error = PushRelayHTTPChannel.refusal(upgradeRequest, path: path) {
            refusal.value = error
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<PushRelayHTTPChannel.Upgrade> {
        inner.upgrade(channel: channel, upgradeRequest: upgradeRequest)
    }
}
