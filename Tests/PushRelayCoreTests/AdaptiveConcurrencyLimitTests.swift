import PushRelayCore
import Testing

/// The in-flight limit follows the latency: it shrinks when queueing shows, and grows back when it is gone.
@Suite struct AdaptiveConcurrencyLimitTests {
    @Test func startsAtTheMaximumAndKeepsItWhileLatencyIsSteady() {
        var l = AdaptiveConcurrencyLimit(minimum: 8, maximum: 256)
        #expect(l.current == 256)
        for _ in 0..<1000 { l.record(latency: 0.020, inFlight: 10) }
        #expect(l.current == 256)
    }

    @Test func queueingShrinksItToTheMinimumAtWorst() {
        var l = AdaptiveConcurrencyLimit(minimum: 8, maximum: 256)
        for _ in 0..<200 { l.record(latency: 0.020, inFlight: 50) }
        // Latency climbs tenfold as dispatches queue behind each other.
        for _ in 0..<60 { l.record(latency: 0.200, inFlight: 250) }
        #expect(l.current < 64)
        for _ in 0..<1000 { l.record(latency: 0.400, inFlight: 250) }
        #expect(l.current >= 8)
    }

    @Test func itGrowsBackWhenLatencyReturnsAndOnlyWhenUsed() {
        var l = AdaptiveConcurrencyLimit(minimum: 8, maximum: 256)
        for _ in 0..<200 { l.record(latency: 0.020, inFlight: 50) }
        for _ in 0..<100 { l.record(latency: 0.300, inFlight: 250) }
        let low = l.current
        // Idle: few in flight, the limit does not move up.
        for _ in 0..<500 { l.record(latency: 0.020, inFlight: 1) }
        #expect(l.current <= low + 1)
        // Busy and fast again: it climbs.
        for _ in 0..<3000 { l.record(latency: 0.020, inFlight: l.current) }
        #expect(l.current > low * 2)
    }
}
