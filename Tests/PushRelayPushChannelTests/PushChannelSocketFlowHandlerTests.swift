import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import PushRelayCore
import PushRelayPushChannel
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The websocket's pings, pongs, keepalive and reads on an `EmbeddedChannel` (`PushChannelSocketFlowHandler`).
@Suite struct PushChannelSocketFlowHandlerTests {
    static let interval = Duration.seconds(30)

    /// Counts the reads the pipeline passes to the socket.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// An active channel with a read counter at the socket's end and the handler on a stepped clock.
    static func channel(clock: ManualClock) throws -> (EmbeddedChannel, ReadCounter) {
        let channel = EmbeddedChannel()
        let counter = ReadCounter()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(
            PushChannelSocketFlowHandler(pingInterval: interval, clock: clock, peer: "192.0.2.1", logger: Logger(label: "test"))
        )
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, counter)
    }

    static func frame(_ opcode: WebSocketOpcode, _ text: String) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, data: ByteBuffer(string: text))
    }

    static func outbound(_ channel: EmbeddedChannel) throws -> [WebSocketFrame] {
        var frames: [WebSocketFrame] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) { frames.append(frame) }
        return frames
    }

    @Test func aPingFloodIntoANonWritableChannelHoldsOnePongAndStopsReading() throws {
        let (channel, counter) = try Self.channel(clock: ManualClock())
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        channel.pipeline.read()
        #expect(counter.reads == 1)
        try channel.writeInbound(Self.frame(.ping, "first"))
        #expect(try Self.outbound(channel).map(\.opcode) == [.pong])

        // The peer stops reading: the channel is not writable.
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        for i in 0..<10_000 { try channel.writeInbound(Self.frame(.ping, "ping \(i)")) }
        channel.pipeline.read()
        #expect(try Self.outbound(channel).isEmpty, "no pong is written while the channel is not writable")
        #expect(counter.reads == 1, "the socket is not read while the channel is not writable")
        // Other frames still go on to the socket handler; pings and pongs do not.
        try channel.writeInbound(Self.frame(.text, "{}"))
        #expect(try channel.readInbound(as: WebSocketFrame.self)?.opcode == .text)
        #expect(try channel.readInbound(as: WebSocketFrame.self) == nil)

        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        let pongs = try Self.outbound(channel)
        #expect(pongs.map(\.opcode) == [.pong])
        #expect(pongs.first?.data == ByteBuffer(string: "ping 9999"), "the latest ping is answered")
        #expect(counter.reads == 2, "the held read goes on")
    }

    @Test func aPeerThatOnlySendsItsOwnPongsIsClosedByTheKeepalive() throws {
        let clock = ManualClock()
        let (channel, _) = try Self.channel(clock: clock)
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        clock.advance(by: Self.interval)
        let ping = try #require(try Self.outbound(channel).first)
        #expect(ping.opcode == .ping)
        // The answer carries the ping's payload: the connection stays.
        try channel.writeInbound(WebSocketFrame(fin: true, opcode: .pong, data: ping.data))
        clock.advance(by: Self.interval)
        #expect(channel.isActive)
        #expect(try Self.outbound(channel).map(\.opcode) == [.ping])
        // Empty pongs, other frames: none answers the ping.
        try channel.writeInbound(Self.frame(.pong, ""))
        try channel.writeInbound(Self.frame(.text, "{}"))
        clock.advance(by: Self.interval)
        #expect(!channel.isActive, "closed at the round after an unanswered ping")
    }

    @Test func aKeepalivePingWaitsForWritabilityAndTheNextRoundClosesAPeerThatNeverRead() throws {
        let clock = ManualClock()
        let (channel, _) = try Self.channel(clock: clock)
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        clock.advance(by: Self.interval)
        #expect(try Self.outbound(channel).isEmpty)
        clock.advance(by: Self.interval)
        #expect(!channel.isActive)
    }

    @Test func aPeerThatClosesItsSideIsClosedAtOnce() throws {
        let (channel, _) = try Self.channel(clock: ManualClock())
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!channel.isActive)
    }
}
