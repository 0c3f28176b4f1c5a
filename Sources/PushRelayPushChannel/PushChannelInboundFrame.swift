import NIOCore
import NIOWebSocket

/// What a frame from a websocket push-channel client asks of the socket, decided without I/O: the socket handler
/// acts on it, and the `websocket-frames` fuzz target runs it on every frame a fuzzed byte stream decodes to.
///
/// Frames arrive decoded by NIO (`WebSocketFrameDecoder`, `channel.max_frame_bytes` a frame) and aggregated
/// (`frameAggregator`): a text or binary message is one frame here, however many fragments it came in.
public enum PushChannelInboundFrame: Equatable, Sendable {
    /// A text message: a channel message for the session.
    case text(String)
    /// A text message that is not UTF-8: RFC 6455 §8.1 fails the connection with 1007.
    case invalidText
    /// A binary message: the session answers that only text is spoken.
    case binary
    /// A ping: answered with a pong carrying the same data (by `PushChannelSocketFlowHandler`, once the channel is
    /// writable).
    case ping(ByteBuffer)
    /// A fragmented control frame (RFC 6455 §5.5 forbids them): the socket closes.
    case fragmentedControl
    /// The peer's close frame, with its status code (1000 when it gave none).
    case close(WebSocketErrorCode)
    /// A pong or anything else: nothing to do here (a pong that answers the keepalive is
    /// `PushChannelSocketFlowHandler`'s).
    case ignored

    public init(_ frame: WebSocketFrame) {
        switch frame.opcode {
        case .text:
            if let text = String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) {
                self = .text(text)
            } else {
                self = .invalidText
            }
        case .binary:
            self = .binary
        case .ping:
            self = frame.fin ? .ping(frame.unmaskedData) : .fragmentedControl
        case .connectionClose:
            var data = frame.unmaskedData
            self = .close(data.readWebSocketErrorCode() ?? .normalClosure)
        default:
            self = .ignored
        }
    }

    /// The handler that joins a message's fragments into one frame, as a channel connection uses it: at most
    /// `maxFrameBytes` a message and 256 fragments.
    public static func frameAggregator(maxFrameBytes: Int) -> NIOWebSocketFrameAggregator {
        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 256, maxAccumulatedFrameSize: maxFrameBytes)
    }
}
