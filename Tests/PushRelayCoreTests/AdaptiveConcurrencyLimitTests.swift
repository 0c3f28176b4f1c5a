import PushRelayCore
import Testing

/// The in-flight limit follows the latency: it shrinks when queueing shows, grows back when it is gone, and takes a
/// lasting change of latency as the new normal after a while, measured in seconds, not in dispatches.
@Suite struct AdaptiveConcurrencyLimitTests {
    /// A limit fed dispatches `interval` seconds apart.
    struct Feed {
        var limit: AdaptiveConcurrencyLimit
        var interval: Double
        var now = 0.0

        mutating func record(_ count: Int, latency: Double, inFlight: Int? = nil) {
            for _ in 0..<count {
                now += interval
                limit.record(latency: latency, inFlight: inFlight ?? limit.current, at: now)
            }
        }
    }

    @Test func startsAtTheMaximumAndKeepsItWhileLatencyIsSteady() {
        var f = Feed(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256), interval: 0.001)
        #expect(f.limit.current == 256)
        f.record(1000, latency: 0.020, inFlight: 10)
        #expect(f.limit.current == 256)
    }

    @Test func queueingShrinksItToTheMinimumAtWorst() {
        var f = Feed(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256), interval: 0.001)
        f.record(200, latency: 0.020, inFlight: 50)
        // Latency climbs tenfold as dispatches queue behind each other.
        f.record(60, latency: 0.200, inFlight: 250)
        #expect(f.limit.current < 64)
        f.record(1000, latency: 0.400, inFlight: 250)
        #expect(f.limit.current >= 8)
    }

    @Test func itGrowsBackWhenLatencyReturnsAndOnlyWhenUsed() {
        var f = Feed(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256), interval: 0.001)
        f.record(200, latency: 0.020, inFlight: 50)
        f.record(100, latency: 0.300, inFlight: 250)
        let low = f.limit.current
        // Idle: few in flight, the limit does not move up.
        f.record(500, latency: 0.020, inFlight: 1)
        #expect(f.limit.current <= low + 1)
        // Busy and fast again: it climbs.
        f.record(3000, latency: 0.020)
        #expect(f.limit.current > low * 2)
    }

    /// Thousands of dispatches a second at three times the usual latency (an overloaded machine) keep the limit down
    /// for the whole 15 s: the baseline follows by time, so that many dispatches do not make the overload normal.
    @Test func aBusyOverloadDoesNotBecomeTheNewNormalWithinSeconds() {
        var f = Feed(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256), interval: 0.0005)
        f.record(20_000, latency: 0.012, inFlight: 64)  // 10 s at the usual load
        f.record(30_000, latency: 0.045)  // 15 s of overload, every place used
        #expect(f.limit.current < 64, "limit \(f.limit.current) after 15 s of overload")
    }

    /// A provider that stays three times slower for minutes is the new normal: the limit comes back up.
    @Test func aLastingChangeOfLatencyBecomesTheNewNormal() {
        var f = Feed(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256), interval: 0.01)
        f.record(1000, latency: 0.100, inFlight: 64)  // 10 s at 100 ms
        f.record(500, latency: 0.300)  // 5 s slower: the limit drops
        let dropped = f.limit.current
        #expect(dropped < 64)
        f.record(30_000, latency: 0.300)  // 5 minutes later
        #expect(f.limit.current > 4 * dropped, "limit \(f.limit.current), \(dropped) when the latency changed")
    }
}
