import NIOCore
import NIOEmbedded
import NIOWebSocket
import PushRelayPushChannel
import Testing

@testable import PushRelayServer

/// What the socket handler makes of each frame a channel client sends, and the aggregator's limits, without a socket.
@Suite struct PushChannelInboundFrameTests {
    func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, maskKey: WebSocketMaskingKey([1, 2, 3, 4]), data: Self.masked(bytes))
    }

    /// The payload as a client sends it (masked with 01 02 03 04); `unmaskedData` gives `bytes` back.
    static func masked(_ bytes: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: bytes.enumerated().map { $0.element ^ UInt8($0.offset % 4 + 1) })
    }

    @Test func framesAreReadAsTheSocketHandlerActsOnThem() {
        #expect(PushChannelInboundFrame(frame(.text, Array(#"{"id":1}"#.utf8))) == .text(#"{"id":1}"#))
        #expect(PushChannelInboundFrame(frame(.text, [0x7b, 0xff, 0x7d])) == .invalidText)
        #expect(PushChannelInboundFrame(frame(.binary, [1, 2])) == .binary)
        #expect(PushChannelInboundFrame(frame(.ping, Array("hi".utf8))) == .ping(ByteBuffer(string: "hi")))
        #expect(PushChannelInboundFrame(frame(.ping, [], fin: false)) == .fragmentedControl)
        #expect(PushChannelInboundFrame(frame(.connectionClose, [0x03, 0xe9] + Array("bye".utf8))) == .close(.goingAway))
        #expect(PushChannelInboundFrame(frame(.connectionClose, [])) == .close(.normalClosure))
        #expect(PushChannelInboundFrame(frame(.pong, [])) == .ignored)
    }

    @Test func fragmentsAreJoinedUpToTheMessageLimit() throws {
        let channel = EmbeddedChannel(handler: PushChannelInboundFrame.frameAggregator(maxFrameBytes: 1024))
        try channel.writeInbound(frame(.text, Array("hel".utf8), fin: false))
        try channel.writeInbound(frame(.continuation, Array("lo".utf8)))
        let joined = try #require(try channel.readInbound(as: WebSocketFrame.self))
        #expect(PushChannelInboundFrame(joined) == .text("hello"))

        try channel.writeInbound(frame(.text, [UInt8](repeating: 0x61, count: 600), fin: false))
        #expect(throws: NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge) {
            try channel.writeInbound(frame(.continuation, [UInt8](repeating: 0x61, count: 600)))
        }
        #expect(try channel.readInbound(as: WebSocketFrame.self) == nil)
    }
}
