import PushRelayHTTP
import Testing

@testable import PushRelayServer

/// The slow-client rules alone: a request's clock runs from its first byte to its answer, the idle clock between.
@Suite struct SlowClientGuardStateMachineTests {
    let t0 = ContinuousClock.now

    func machine() -> SlowClientGuard.StateMachine {
        SlowClientGuard.StateMachine(now: t0, requestTimeout: .seconds(10), idleTimeout: .seconds(60))
    }

    @Test func trickledBytesDoNotExtendTheRequestsClock() {
        var m = machine()
        m.received(now: t0 + .seconds(1))
        for s in 2...10 { m.received(now: t0 + .seconds(Int64(s))) }
        #expect(m.timerFired(now: t0 + .seconds(10)) == .check(at: t0 + .seconds(11)))
        #expect(m.timerFired(now: t0 + .seconds(11)) == .close(.requestTimeout))
        #expect(m.state == .closing(deadline: t0 + .seconds(12)))
    }

    @Test func aTimedOutRequestClosesEvenIfIts408IsNeverWritten() {
        // A client that sends and does not read has answers queued ahead of the 408: the connection closes
        // `closeGrace` after the timeout whatever was written, and nothing the client does delays it.
        var m = machine()
        m.received(now: t0)
        #expect(m.timerFired(now: t0 + .seconds(10)) == .close(.requestTimeout))
        m.answered(now: t0 + .milliseconds(10_100))  // the 408 itself going out
        m.received(now: t0 + .milliseconds(10_500))
        #expect(m.nextCheck == t0 + .seconds(11))
        #expect(m.timerFired(now: t0 + .milliseconds(10_900)) == .check(at: t0 + .seconds(11)))
        #expect(m.timerFired(now: t0 + .seconds(11)) == .close(.unwrittenAnswer))
        #expect(m.state == .closed)
        #expect(m.timerFired(now: t0 + .seconds(12)) == nil)
    }

    @Test func anAnsweredRequestStartsTheIdleClock() {
        var m = machine()
        m.received(now: t0 + .seconds(1))
        m.answered(now: t0 + .seconds(9))
        #expect(m.timerFired(now: t0 + .seconds(20)) == .check(at: t0 + .seconds(69)))
        // The next request resets it to the request clock.
        m.received(now: t0 + .seconds(30))
        #expect(m.nextCheck == t0 + .seconds(40))
        m.answered(now: t0 + .seconds(31))
        #expect(m.timerFired(now: t0 + .seconds(91)) == .close(.idle))
    }

    @Test func aConnectionThatNeverSendsIsIdle() {
        var m = machine()
        #expect(m.nextCheck == t0 + .seconds(60))
        #expect(m.timerFired(now: t0 + .seconds(60)) == .close(.idle))
    }
}
