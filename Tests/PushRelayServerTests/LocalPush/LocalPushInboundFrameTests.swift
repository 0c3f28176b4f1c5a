import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import PushRelayServer

/// What the socket handler makes of each frame a channel client sends, and the aggregator's limits, without a socket.
@Suite struct LocalPushInboundFrameTests {
    func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, maskKey: WebSocketMaskingKey([1, 2, 3, 4]), data: Self.masked(bytes))
    }

    /// The payload as a client sends it (masked with 01 02 03 04); `unmaskedData` gives `bytes` back.
    static func masked(_ bytes: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: bytes.enumerated().map { $0.element ^ UInt8($0.offset % 4 + 1) })
    }

    @Test func framesAreReadAsTheSocketHandlerActsOnThem() {
        #expect(LocalPushInboundFrame(frame(.text, Array(#"{"id":1}"#.utf8))) == .text(#"{"id":1}"#))
        #expect(LocalPushInboundFrame(frame(.text, [0x7b, 0xff, 0x7d])) == .invalidText)
        #expect(LocalPushInboundFrame(frame(.binary, [1, 2])) == .binary)
        #expect(LocalPushInboundFrame(frame(.ping, Array("hi".utf8))) == .ping(ByteBuffer(string: "hi")))
        #expect(LocalPushInboundFrame(frame(.ping, [], fin: false)) == .fragmentedControl)
        #expect(LocalPushInboundFrame(frame(.connectionClose, [0x03, 0xe9] + Array("bye".utf8))) == .close(.goingAway))
        #expect(LocalPushInboundFrame(frame(.connectionClose, [])) == .close(.normalClosure))
        #expect(LocalPushInboundFrame(frame(.pong, [])) == .ignored)
    }

    @Test func fragmentsAreJoinedUpToTheMessageLimit() throws {
        let channel = EmbeddedChannel(handler: LocalPushInboundFrame.frameAggregator(maxFrameBytes: 1024))
        try channel.writeInbound(frame(.text, Array("hel".utf8), fin: false))
        try channel.writeInbound(frame(.continuation, Array("lo".utf8)))
        let joined = try #require(try channel.readInbound(as: WebSocketFrame.self))
        #expect(LocalPushInboundFrame(joined) == .text("hello"))

        try channel.writeInbound(frame(.text, [UInt8](repeating: 0x61, count: 600), fin: false))
        #expect(throws: NIOWebSocketFrameAggregator.Error.accumulatedFrameSizeIsTooLarge) {
            try channel.writeInbound(frame(.continuation, [UInt8](repeating: 0x61, count: 600)))
        }
        #expect(try channel.readInbound(as: WebSocketFrame.self) == nil)
    }
}
