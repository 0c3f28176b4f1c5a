import PushRelayCore
import PushRelayHTTP
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The phases of a stop, what starts it, and what ends the drain: its time, or a second stop.
struct ServerLifecycleTests {
    @Test func theFirstStopStartsTheDrainAndTheGroupsShutdown() async throws {
        let lifecycle = ServerLifecycle()
        let triggered = Locked(0)
        lifecycle.onStop { triggered.withLock { $0 += 1 } }
        #expect(lifecycle.phase == .serving && !lifecycle.isStopping)
        lifecycle.beginStop()
        #expect(lifecycle.phase == .draining && lifecycle.isStopping && !lifecycle.isClosing)
        try await eventually("the service group was told to shut down") { triggered.withLock { $0 } == 1 }
        lifecycle.advance(to: .closing)
        lifecycle.beginStop()
        lifecycle.advance(to: .draining)
        #expect(lifecycle.phase == .closing && lifecycle.isClosing, "the phases only move forward")
        #expect(triggered.withLock { $0 } == 1)
    }

    @Test func aStopBeforeTheGroupRunsStartsItsShutdownOnceItDoes() async throws {
        let lifecycle = ServerLifecycle()
        lifecycle.beginStop()
        let triggered = Locked(false)
        lifecycle.onStop { triggered.withLock { $0 = true } }
        try await eventually("the service group was told to shut down") { triggered.withLock { $0 } }
    }

    @Test func theDrainLastsItsPeriod() async throws {
        let clock = ManualClock()
        let lifecycle = ServerLifecycle()
        lifecycle.shutdownBegan()
        #expect(lifecycle.phase == .draining)
        let drain = Task { await lifecycle.drain(for: .seconds(5), clock: clock) }
        try await eventually("the drain's timer is set") { clock.pendingDelays.count == 1 }
        clock.advance(by: 4.9)
        clock.advance(by: 0.1)
        #expect(await drain.value == true)
        #expect(await lifecycle.drain(for: .zero, clock: clock) == true)
    }

    @Test func aSecondStopEndsTheDrain() async throws {
        let clock = ManualClock()
        let lifecycle = ServerLifecycle()
        lifecycle.beginStop()
        let drain = Task { await lifecycle.drain(for: .seconds(5), clock: clock) }
        try await eventually("the drain's timer is set") { clock.pendingDelays.count == 1 }
        lifecycle.beginStop()
        #expect(await drain.value == false)
        #expect(clock.pendingDelays.count == 0, "the timer was cancelled")
    }
}
