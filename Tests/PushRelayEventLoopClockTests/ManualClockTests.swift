import Foundation
import PushRelayCore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// The time port the tests step (`ManualClock`, PushRelayTestSupport), with `sleep(for:)` on top.
///
/// ThreadSanitizer: timers scheduled and fired from different tasks as the clock is stepped.
@Suite struct ManualClockTests {
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
        #expect(clock.pendingDelays.isEmpty)
    }

    @Test func eachTimerRunsAtItsDueTimeAndTimersItSchedulesRunWithinTheStep() {
        let clock = ManualClock()
        let start = clock.instant
        let seen = Locked<[Duration]>([])
        clock.schedule(after: .seconds(1)) {
            seen.withLock { $0.append(start.duration(to: clock.instant)) }
            clock.schedule(after: .seconds(1)) { seen.withLock { $0.append(start.duration(to: clock.instant)) } }
        }
        clock.advance(by: .seconds(5))
        #expect(seen.withLock { $0 } == [.seconds(1), .seconds(2)])
        #expect(start.duration(to: clock.instant) == .seconds(5))
    }

    @Test func theWallTimeMovesWithTheStepsAndIsSetWithoutRunningTimers() {
        let clock = ManualClock("2026-11-21T23:59:58Z")
        let fired = Locked(false)
        clock.schedule(after: .seconds(1)) { fired.withLock { $0 = true } }
        clock.advance(by: 3)
        #expect(clock.now() == ManualClock.date("2026-11-22T00:00:01Z"))
        #expect(fired.withLock { $0 })
        clock.schedule(after: .seconds(1)) { fired.withLock { $0 = false } }
        clock.set("2026-12-01T00:00:00Z")
        #expect(clock.now() == ManualClock.date("2026-12-01T00:00:00Z"))
        #expect(fired.withLock { $0 }, "setting the date runs no timer")
        #expect(clock.pendingDelays == [.seconds(1)])
    }

    @Test func nextScheduledWaitsForATimerThatMatches() async {
        let clock = ManualClock()
        let found = Task { await clock.nextScheduled(where: { $0 > .seconds(1) }) }
        clock.schedule(after: .milliseconds(500)) {}
        clock.schedule(after: .seconds(3)) {}
        #expect(await found.value == .seconds(3))
    }

    @Test func sleepEndsWhenTheClockGetsThereAndAtOnceOnCancellation() async throws {
        let clock = ManualClock()
        let woke = Locked(false)
        let sleeper = Task {
            try await clock.sleep(for: .seconds(5))
            woke.withLock { $0 = true }
        }
        _ = await clock.nextScheduled()
        clock.advance(by: 4.9)
        #expect(!woke.withLock { $0 })
        clock.advance(by: 0.1)
        try await sleeper.value
        #expect(woke.withLock { $0 })

        let cancelled = Task { try await clock.sleep(for: .seconds(5)) }
        _ = await clock.nextScheduled()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.pendingDelays.isEmpty, "a cancelled sleep leaves no timer behind")
    }

    @Test func withRealTimersOnlyTheWallTimeIsTheTests() async throws {
        let clock = ManualClock("2026-11-21T12:00:00Z", timers: .real)
        let fired = Locked(false)
        clock.schedule(after: .milliseconds(10)) { fired.withLock { $0 = true } }
        #expect(clock.pendingDelays.isEmpty, "nothing waits for a step")
        try await eventually("the timer fires in real time") { fired.withLock { $0 } }
        #expect(clock.now() == ManualClock.date("2026-11-21T12:00:00Z"))
    }
}
