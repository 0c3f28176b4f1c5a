import NIOCore
import PushRelayPushChannel
import Testing

@testable import PushRelayServer

/// The websocket's control frames and reads while the peer does not read (`PushChannelSocketFlow`), without a socket.
@Suite struct PushChannelSocketFlowTests {
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test func aWritableChannelIsReadAndItsPingsAnsweredAtOnce() {
        var flow = PushChannelSocketFlow()
        #expect(flow.readRequested() == .read)
        #expect(flow.pingReceived(Self.bytes("a")) == Self.bytes("a"))
        #expect(flow.pingReceived(Self.bytes("b")) == Self.bytes("b"))
        #expect(flow.pendingPong == nil && !flow.readHeld)
    }

    @Test func whileNotWritableReadsAreHeldAndOnlyTheLatestPingIsAnswered() {
        var flow = PushChannelSocketFlow()
        #expect(flow.writabilityChanged(to: false) == .none)
        #expect(flow.readRequested() == .hold)
        for i in 0..<1_000 { #expect(flow.pingReceived(Self.bytes("ping \(i)")) == nil) }
        #expect(flow.pendingPong == Self.bytes("ping 999") && flow.readHeld)
        // Writable again: one pong (the latest ping's), and the held read goes on.
        #expect(flow.writabilityChanged(to: true) == .init(pong: Self.bytes("ping 999"), ping: nil, read: true))
        #expect(flow.pendingPong == nil && !flow.readHeld)
        #expect(flow.writabilityChanged(to: true) == .none)
        #expect(flow.readRequested() == .read)
    }

    @Test func writableAgainWithoutAHeldReadDoesNotRead() {
        var flow = PushChannelSocketFlow(writable: false)
        #expect(flow.writabilityChanged(to: true) == .none)
    }

    @Test func onlyThePongThatCarriesTheKeepalivePingsPayloadAnswersIt() {
        var flow = PushChannelSocketFlow()
        #expect(flow.keepaliveDue(payload: Self.bytes("round-1")) == .ping(Self.bytes("round-1")))
        // Unsolicited pongs (an empty one, another payload) leave the ping unanswered.
        flow.pongReceived(Self.bytes(""))
        flow.pongReceived(Self.bytes("round-0"))
        #expect(flow.awaitedPong == Self.bytes("round-1"))
        flow.pongReceived(Self.bytes("round-1"))
        #expect(flow.awaitedPong == nil)
        #expect(flow.keepaliveDue(payload: Self.bytes("round-2")) == .ping(Self.bytes("round-2")))
        // No answer by the next round: close.
        flow.pongReceived(Self.bytes(""))
        #expect(flow.keepaliveDue(payload: Self.bytes("round-3")) == .close)
    }

    @Test func aKeepalivePingDueWhileNotWritableWaitsAndStillCounts() {
        var flow = PushChannelSocketFlow()
        _ = flow.writabilityChanged(to: false)
        #expect(flow.keepaliveDue(payload: Self.bytes("round-1")) == .wait)
        #expect(flow.pendingPing == Self.bytes("round-1"))
        // Still not writable at the next round: the peer never got the ping, nor read anything; it is closed.
        #expect(flow.keepaliveDue(payload: Self.bytes("round-2")) == .close)

        var later = PushChannelSocketFlow(writable: false)
        #expect(later.keepaliveDue(payload: Self.bytes("round-1")) == .wait)
        _ = later.pingReceived(Self.bytes("theirs"))
        #expect(later.writabilityChanged(to: true) == .init(pong: Self.bytes("theirs"), ping: Self.bytes("round-1"), read: false))
        later.pongReceived(Self.bytes("round-1"))
        #expect(later.keepaliveDue(payload: Self.bytes("round-2")) == .ping(Self.bytes("round-2")))
    }
}
