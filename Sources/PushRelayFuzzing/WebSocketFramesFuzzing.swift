import NIOCore
import NIOEmbedded
import NIOWebSocket
import PushRelayPushChannel

/// A byte stream from a websocket push-channel client, read as the server reads it after the upgrade: NIO's frame
/// decoder and protocol-error handler, the channel's fragment aggregator, then what the socket handler makes of each
/// message (`PushChannelInboundFrame`), with every text message parsed as a channel message. The stream arrives in two
/// reads split at a point the input chooses, so frames cut across reads are covered.
///
/// Holds: no crash; every message that gets through is at most the frame limit; a text message is valid UTF-8 and
/// goes through the channel-message target. Protocol errors (an oversized frame, reserved bits, too many fragments)
/// are the decoder's refusals, not failures.
enum WebSocketFramesFuzzing {
    /// The smallest `channel.max_frame_bytes` the configuration allows: the limits are reached by small inputs.
    static let maxFrameBytes = 1024

    static func run(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel()
        do {
            try channel.pipeline.syncOperations.addHandlers([
                WebSocketFrameEncoder(),
                ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameBytes)),
                WebSocketProtocolErrorHandler(),
                PushChannelInboundFrame.frameAggregator(maxFrameBytes: maxFrameBytes),
            ])
        } catch {
            fatalError("could not build the websocket pipeline: \(error)")
        }
        let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        for part in [bytes[..<split], bytes[split...]] where !part.isEmpty {
            do {
                try channel.writeInbound(ByteBuffer(bytes: part))
            } catch {
                break  // a protocol error: the server closes the connection here
            }
        }
        while let frame = try? channel.readInbound(as: WebSocketFrame.self) {
            check(frame)
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    static func check(_ frame: WebSocketFrame) {
        if frame.opcode == .text || frame.opcode == .binary {
            guard frame.unmaskedData.readableBytes <= maxFrameBytes else {
                fatalError("a \(frame.unmaskedData.readableBytes)-byte message got past the \(maxFrameBytes)-byte limit")
            }
        }
        switch PushChannelInboundFrame(frame) {
        case .text(let text):
            PushChannelMessageFuzzing.run(Array(text.utf8))
        case .invalidText:
            guard String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) == nil else {
                fatalError("valid UTF-8 was called invalid")
            }
        case .ping(let data):
            guard frame.fin, data == frame.unmaskedData else { fatalError("a ping's pong would not echo it") }
        case .binary, .fragmentedControl, .close, .ignored:
            break
        }
    }
}
