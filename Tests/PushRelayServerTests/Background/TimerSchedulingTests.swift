import PushRelayCore
import PushRelayEventLoopClock
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The server's timers and the simulated ones the tests drive, with `sleep(for:)` on top of both.
@Suite struct TimerSchedulingTests {
    @Test func aManualClockFiresWhatIsDueInOrderAndNotWhatWasCancelled() {
        let clock = ManualClock()
        let fired = Locked<[Int]>([])
        clock.schedule(after: .seconds(2)) { fired.withLock { $0.append(2) } }
        clock.schedule(after: .milliseconds(1_500)) { fired.withLock { $0.append(1) } }
        let cancelled = clock.schedule(after: .seconds(1)) { fired.withLock { $0.append(0) } }
        cancelled.cancel()
        clock.advance(by: 1.4)
        #expect(fired.withLock { $0 }.isEmpty)
        clock.advance(by: 1)
        #expect(fired.withLock { $0 } == [1, 2])
        #expect(clock.pendingDelays.count == 0)
    }

    @Test func sleepEndsWhenTheClockGetsThereAndAtOnceOnCancellation() async throws {
        let clock = ManualClock()
        let woke = Locked(false)
        let sleeper = Task {
            try await clock.sleep(for: .seconds(5))
            woke.withLock { $0 = true }
        }
        try await eventually("the sleep is scheduled") { clock.pendingDelays.count == 1 }
        clock.advance(by: 4.9)
        #expect(!woke.withLock { $0 })
        clock.advance(by: 0.1)
        try await sleeper.value
        #expect(woke.withLock { $0 })

        let cancelled = Task { try await clock.sleep(for: .seconds(5)) }
        try await eventually("the sleep is scheduled") { clock.pendingDelays.count == 1 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.pendingDelays.count == 0, "a cancelled sleep leaves no timer behind")
    }

    @Test func eventLoopTimersRunOnceAndNotAfterCancel() async throws {
        let timers = EventLoopClock()
        let fired = Locked<[String]>([])
        let stopped = timers.schedule(after: .milliseconds(20)) { fired.withLock { $0.append("cancelled") } }
        stopped.cancel()
        timers.schedule(after: .milliseconds(10)) { fired.withLock { $0.append("ran") } }
        try await timers.sleep(for: .milliseconds(50))
        #expect(fired.withLock { $0 } == ["ran"])
    }
}
