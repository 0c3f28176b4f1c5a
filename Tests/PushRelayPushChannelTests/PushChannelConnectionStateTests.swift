import PushRelayPushChannel
import Testing

@testable import PushRelayServer

/// A connection's outbound rules alone (`PushChannelConnectionState`): its bounds, its single writer, its close and
/// whoever waits on it, without a socket or a task. Frames are strings, waiters numbers.
@Suite struct PushChannelConnectionStateTests {
    typealias Machine = PushChannelConnectionState<String, Int>

    static func text(_ count: Int) -> String { String(repeating: "x", count: count) }

    @Test func theQueueHoldsAtMostItsBoundInFrames() {
        var m = Machine(frameLimit: 3, byteLimit: 1_000)
        #expect(m.frameOffered("a", size: 1) == .queued(startWriter: true, wake: []))
        #expect(m.frameOffered("b", size: 1) == .queued(startWriter: false, wake: []))
        #expect(m.frameOffered("c", size: 1) == .queued(startWriter: false, wake: []))
        #expect(m.queued == 3 && m.bytes == 3)
        // Three bytes of a thousand: the frame count alone refuses the fourth.
        #expect(m.frameOffered("d", size: 1) == .overflow(startWriter: false, wake: []))
        #expect(m.isClosed && m.reason == .overflow)
        #expect(m.queued == 3 && m.bytes == 3, "the overflowing frame is not queued")
    }

    @Test func theByteBoundCountsTheFrameBeingWrittenAndTakesAFrameThatFillsItExactly() {
        var m = Machine(frameLimit: 256, byteLimit: 10_000)
        let first = Self.text(6_000)
        #expect(m.frameOffered(first, size: 6_000) == .queued(startWriter: true, wake: []))
        #expect(m.writerNext() == .write(first, wake: []))
        #expect(m.queued == 0 && m.bytes == 6_000, "the frame being written still counts")
        // 4,000 more bytes reach the bound exactly and fit; one byte more does not, whatever the frame count.
        #expect(m.frameOffered(Self.text(4_000), size: 4_000) == .queued(startWriter: false, wake: []))
        #expect(m.bytes == 10_000)
        #expect(m.frameOffered("b", size: 1) == .overflow(startWriter: false, wake: []))
        #expect(m.reason == .overflow)
    }

    @Test func aFrameAloneAlwaysFitsHoweverLargeAndItsBytesAreGivenBack() {
        var m = Machine(frameLimit: 256, byteLimit: 4_096)
        let large = Self.text(5_000)
        #expect(m.fits(size: 5_000))
        #expect(m.frameOffered(large, size: 5_000) == .queued(startWriter: true, wake: []))
        #expect(!m.fits(size: 1), "nothing fits beside a frame over the bound")
        #expect(m.writerNext() == .write(large, wake: []))
        #expect(!m.fits(size: 1), "the frame being written still counts")
        m.writeCompleted()
        #expect(m.bytes == 0)
        #expect(m.writerNext() == .stop(wake: []))
        #expect(m.frameOffered(large, size: 5_000) == .queued(startWriter: true, wake: []), "written frames no longer count")
        #expect(!m.isClosed)
    }

    @Test func anOverflowClosesWithItsReasonOnlyAfterWhatIsQueuedWentOut() {
        var m = Machine(frameLimit: 2, byteLimit: 1_000)
        #expect(m.frameOffered("a", size: 1) == .queued(startWriter: true, wake: []))
        #expect(m.frameOffered("b", size: 1) == .queued(startWriter: false, wake: []))
        #expect(m.frameOffered("c", size: 1) == .overflow(startWriter: false, wake: []))
        #expect(m.frameOffered("d", size: 1) == .refused, "a closed connection takes no frame")
        #expect(m.writerNext() == .write("a", wake: []))
        m.writeCompleted()
        #expect(m.writerNext() == .write("b", wake: []))
        m.writeCompleted()
        #expect(m.writerNext() == .finish(closeFrame: .overflow, wake: []))
        #expect(!m.isFinished, "finished once the close frame is sent")
        #expect(m.closeFrameSent() == [])
        #expect(m.isFinished && m.bytes == 0)
    }

    @Test func anOverflowWithNoWriterRunningStartsOneToSendTheCloseFrame() {
        var m = Machine(frameLimit: 0, byteLimit: 1_000)
        #expect(m.frameOffered("a", size: 1) == .overflow(startWriter: true, wake: []))
        #expect(m.writerNext() == .finish(closeFrame: .overflow, wake: []))
    }

    @Test func onlyAConnectionTurnedAwayClosesItsSocketSoonAndOnlyAFailedSocketOrAGoneClientSendsNoCloseFrame() {
        let turnedAway: [Machine.CloseReason] = [.authFailed, .bindingReplaced, .evicted]
        let silent: [Machine.CloseReason] = [.writeFailed, .clientGone]
        let all: [Machine.CloseReason] = [.overflow, .writeFailed, .serverShutdown, .authFailed, .clientGone, .bindingReplaced, .evicted]
        for reason in all {
            var m = Machine(frameLimit: 4, byteLimit: 1_000)
            let closeSoon = turnedAway.contains(reason)
            #expect(m.closeRequested(reason) == .closed(startWriter: true, closeSoon: closeSoon, wake: []), "\(reason)")
            #expect(m.writerNext() == .finish(closeFrame: silent.contains(reason) ? nil : reason, wake: []), "\(reason)")
        }
    }

    @Test func closingTwiceKeepsTheFirstReasonAndDoesNothingMore() {
        var m = Machine(frameLimit: 4, byteLimit: 1_000)
        #expect(m.frameOffered("a", size: 1) == .queued(startWriter: true, wake: []))
        #expect(m.closeRequested(.clientGone) == .closed(startWriter: false, closeSoon: false, wake: []))
        #expect(m.closeRequested(.authFailed) == .none, "no second close, and no closeSoon")
        #expect(m.closeRequested(.clientGone) == .none)
        #expect(m.reason == .clientGone)
        #expect(m.writerNext() == .write("a", wake: []))
        m.writeCompleted()
        #expect(m.writerNext() == .finish(closeFrame: nil, wake: []))
    }

    @Test func commandsWaitUntilTheQueueIsBelowHalfOfItsFrameBound() {
        var m = Machine(frameLimit: 4, byteLimit: 1_000)
        _ = m.frameOffered("a", size: 10)
        #expect(m.hasRoom, "one frame of four")
        #expect(m.roomAsked(by: 0) == .goAhead)
        _ = m.frameOffered("b", size: 10)
        #expect(!m.hasRoom, "two frames of four: half the bound")
        #expect(m.roomAsked(by: 1) == .wait)
        #expect(m.roomAsked(by: 2) == .wait)
        // Taking a frame leaves one queued: below half, so both waiters go on.
        #expect(m.writerNext() == .write("a", wake: [1, 2]))
        #expect(m.writerNext() == .write("b", wake: []), "woken once")
    }

    @Test func commandsWaitUntilTheQueueIsBelowHalfOfItsByteBoundCountingTheFrameBeingWritten() {
        var m = Machine(frameLimit: 256, byteLimit: 1_000)
        _ = m.frameOffered(Self.text(499), size: 499)
        #expect(m.hasRoom)
        _ = m.frameOffered("b", size: 1)
        #expect(!m.hasRoom, "500 bytes of 1,000")
        #expect(m.roomAsked(by: 7) == .wait)
        #expect(m.writerNext() == .write(Self.text(499), wake: []), "the frame being written still counts")
        m.writeCompleted()
        #expect(m.hasRoom)
        // Its bytes given back, the writer's next step wakes the waiter.
        #expect(m.writerNext() == .write("b", wake: [7]))
    }

    @Test func closingWakesEveryRoomWaiterAndLetsEveryCommandGoOn() {
        var m = Machine(frameLimit: 2, byteLimit: 1_000)
        _ = m.frameOffered("a", size: 1)
        #expect(m.roomAsked(by: 1) == .wait)
        #expect(m.closeRequested(.serverShutdown) == .closed(startWriter: false, closeSoon: false, wake: [1]))
        #expect(m.hasRoom && m.roomAsked(by: 2) == .goAhead)

        var overflowing = Machine(frameLimit: 2, byteLimit: 1_000)
        _ = overflowing.frameOffered("a", size: 1)
        _ = overflowing.frameOffered("b", size: 1)
        #expect(overflowing.roomAsked(by: 3) == .wait)
        #expect(overflowing.frameOffered("c", size: 1) == .overflow(startWriter: false, wake: [3]))
    }

    @Test func aSingleWriterAtATimeAndANewOneOnlyAfterItStopped() {
        var m = Machine(frameLimit: 8, byteLimit: 1_000)
        #expect(m.frameOffered("a", size: 1) == .queued(startWriter: true, wake: []))
        #expect(m.writing)
        #expect(m.writerNext() == .write("a", wake: []))
        #expect(m.frameOffered("b", size: 1) == .queued(startWriter: false, wake: []), "the writer is still running")
        m.writeCompleted()
        #expect(m.writerNext() == .write("b", wake: []))
        m.writeCompleted()
        #expect(m.writerNext() == .stop(wake: []))
        #expect(!m.writing)
        #expect(m.frameOffered("c", size: 1) == .queued(startWriter: true, wake: []), "the writer stopped: the next frame starts one")
        // The writer that sends the close frame is the last: it keeps its claim.
        #expect(m.closeRequested(.serverShutdown) == .closed(startWriter: false, closeSoon: false, wake: []))
        #expect(m.writerNext() == .write("c", wake: []))
        m.writeCompleted()
        #expect(m.writerNext() == .finish(closeFrame: .serverShutdown, wake: []))
        #expect(m.writing)
    }

    @Test func afterAFailedWriteEveryLaterFrameFailsWithoutTouchingTheSocket() {
        var m = Machine(frameLimit: 8, byteLimit: 1_000)
        _ = m.frameOffered("a", size: 10)
        _ = m.frameOffered("b", size: 20)
        #expect(m.writerNext() == .write("a", wake: []))
        m.writeFailed()
        #expect(m.writeHasFailed && m.bytes == 20)
        #expect(!m.isClosed, "the writer closes with .writeFailed after failing the frame")
        // A frame offered before that close is queued, and fails like the rest.
        #expect(m.frameOffered("c", size: 30) == .queued(startWriter: false, wake: []))
        #expect(m.closeRequested(.writeFailed) == .closed(startWriter: false, closeSoon: false, wake: []))
        #expect(m.frameOffered("d", size: 1) == .refused)
        #expect(m.writerNext() == .fail("b", wake: []))
        #expect(m.writerNext() == .fail("c", wake: []))
        #expect(m.bytes == 0)
        #expect(m.writerNext() == .finish(closeFrame: nil, wake: []))
    }

    @Test func finishWaitersAreWokenOnlyOnceTheCloseFrameWasSent() {
        var m = Machine(frameLimit: 8, byteLimit: 1_000)
        #expect(m.finishAsked(by: 1) == .wait)
        _ = m.frameOffered("a", size: 1)
        #expect(m.closeRequested(.serverShutdown) == .closed(startWriter: false, closeSoon: false, wake: []))
        #expect(m.finishAsked(by: 2) == .wait, "closed, but a frame is still queued")
        #expect(m.writerNext() == .write("a", wake: []))
        m.writeCompleted()
        #expect(m.writerNext() == .finish(closeFrame: .serverShutdown, wake: []))
        #expect(m.finishAsked(by: 3) == .wait, "drained, but the close frame is not sent yet")
        #expect(!m.isFinished)
        #expect(m.closeFrameSent() == [1, 2, 3])
        #expect(m.isFinished)
        #expect(m.finishAsked(by: 4) == .goAhead)
    }
}
