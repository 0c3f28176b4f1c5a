import NIOCore
import NIOEmbedded
import NIOPosix
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// Timers on a given event loop through any time port: what a channel handler schedules.
///
/// ThreadSanitizer: timers handed between an event loop and the time port.
@Suite struct TimePortEventLoopTests {
    @Test func aManualClocksTimerRunsOnAnEmbeddedLoopAsTheTestSteps() {
        let clock = ManualClock()
        let loop = EmbeddedEventLoop()
        var fired = 0
        let timer = clock.schedule(after: .seconds(1), on: loop.assumeIsolated()) { fired += 1 }
        clock.advance(by: .milliseconds(999))
        #expect(fired == 0)
        clock.advance(by: .milliseconds(1))
        #expect(fired == 1, "run at once, on the loop's thread")
        timer.cancel()
        clock.advance(by: .seconds(5))
        #expect(fired == 1)
    }

    @Test func aRepeatingTimerRunsEveryIntervalUntilCancelled() {
        let clock = ManualClock()
        let loop = EmbeddedEventLoop()
        var runs = 0
        let timer = clock.scheduleRepeating(every: .seconds(2), on: loop.assumeIsolated()) { runs += 1 }
        clock.advance(by: .seconds(7))
        #expect(runs == 3)
        timer.cancel()
        clock.advance(by: .seconds(10))
        #expect(runs == 3)
        #expect(clock.pendingDelays.isEmpty)
    }

    @Test func aManualClocksTimerHopsToARealLoop() async throws {
        let clock = ManualClock()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let ranOnLoop = Locked<Bool?>(nil)
        clock.schedule(after: .seconds(1), on: loop) { ranOnLoop.withLock { $0 = loop.inEventLoop } }
        clock.advance(by: .seconds(1))
        try await eventually("the timer ran") { ranOnLoop.withLock { $0 } != nil }
        #expect(ranOnLoop.withLock { $0 } == true)
    }

    @Test func theEventLoopClocksTimerIsTheLoopsOwn() async throws {
        let clock = EventLoopClock()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let ranOnLoop = Locked<Bool?>(nil)
        clock.schedule(after: .milliseconds(5), on: loop) { ranOnLoop.withLock { $0 = loop.inEventLoop } }
        let stopped = clock.schedule(after: .milliseconds(5), on: loop) { ranOnLoop.withLock { $0 = false } }
        stopped.cancel()
        try await eventually("the timer ran") { ranOnLoop.withLock { $0 } != nil }
        try await clock.sleep(for: .milliseconds(20))
        #expect(ranOnLoop.withLock { $0 } == true)
    }
}
