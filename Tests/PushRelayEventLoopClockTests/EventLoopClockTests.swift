import PushRelayCore
import PushRelayEventLoopClock
import Testing

/// The system's time port on NIO's event loops.
///
/// ThreadSanitizer: timers scheduled from tasks and fired on event loops.
@Suite struct EventLoopClockTests {
    @Test func aTimerRunsOnceAndNotAfterCancel() async throws {
        let clock = EventLoopClock()
        let fired = Locked<[String]>([])
        let stopped = clock.schedule(after: .milliseconds(20)) { fired.withLock { $0.append("cancelled") } }
        stopped.cancel()
        clock.schedule(after: .milliseconds(10)) { fired.withLock { $0.append("ran") } }
        try await clock.sleep(for: .milliseconds(50))
        #expect(fired.withLock { $0 } == ["ran"])
    }

    @Test func itsInstantIsTheMonotonicClocks() {
        let clock = EventLoopClock()
        let before = ContinuousClock.now
        let instant = clock.instant
        #expect(instant >= before && instant <= ContinuousClock.now)
    }
}
