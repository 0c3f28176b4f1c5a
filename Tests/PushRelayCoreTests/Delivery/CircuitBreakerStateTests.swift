import Foundation
import PushRelayCore
import Testing

/// The circuit breaker's rules alone.
@Suite struct CircuitBreakerStateTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let settings = CircuitBreakerState.Settings(failureRatio: 0.5, minimumRequests: 4, window: 30, coolDown: 10, probeTimeout: 5)

    @Test func opensWhenMostOfEnoughRequestsFail() {
        var b = CircuitBreakerState(settings: settings)
        #expect(b.record(.failed, now: t0) == nil)
        #expect(b.record(.failed, now: t0) == nil)
        #expect(b.record(.failed, now: t0) == nil, "three requests are not enough to judge")
        #expect(b.record(.healthy, now: t0) == .opened(failures: 3, requests: 4))
        #expect(b.admit(now: t0.addingTimeInterval(1)) == .refuse(retryAfter: 9, failures: 3, requests: 4))
    }

    @Test func staysClosedWhileMostSucceedAndForgetsOldWindows() {
        var b = CircuitBreakerState(settings: settings)
        for _ in 0..<3 { _ = b.record(.healthy, now: t0) }
        for _ in 0..<2 { #expect(b.record(.failed, now: t0) == nil) }
        // A new window: the old failures no longer count.
        for _ in 0..<3 { #expect(b.record(.healthy, now: t0.addingTimeInterval(31)) == nil) }
        #expect(b.record(.failed, now: t0.addingTimeInterval(32)) == nil)
        #expect(b.admit(now: t0.addingTimeInterval(33)) == .allow)
    }

    @Test func aProbeAfterTheCoolDownClosesOrReopensIt() {
        var b = CircuitBreakerState(settings: settings)
        for _ in 0..<4 { _ = b.record(.failed, now: t0) }
        #expect(b.admit(now: t0.addingTimeInterval(10)) == .probe)
        // Only one probe at a time.
        if case .refuse = b.admit(now: t0.addingTimeInterval(11)) {} else { Issue.record("a second probe went through") }
        #expect(b.record(.failed, now: t0.addingTimeInterval(11)) == .opened(failures: 4, requests: 4))
        #expect(b.admit(now: t0.addingTimeInterval(20)) != .allow)
        #expect(b.admit(now: t0.addingTimeInterval(21)) == .probe)
        #expect(b.record(.healthy, now: t0.addingTimeInterval(21)) == .closed)
        #expect(b.admit(now: t0.addingTimeInterval(21)) == .allow)
    }

    @Test func aProbeThatNeverReportsIsReplaced() {
        var b = CircuitBreakerState(settings: settings)
        for _ in 0..<4 { _ = b.record(.failed, now: t0) }
        #expect(b.admit(now: t0.addingTimeInterval(10)) == .probe)
        #expect(b.admit(now: t0.addingTimeInterval(14)) != .probe)
        #expect(b.admit(now: t0.addingTimeInterval(15)) == .probe)
    }
}
