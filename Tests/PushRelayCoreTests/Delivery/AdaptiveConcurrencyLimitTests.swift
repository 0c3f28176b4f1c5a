import PushRelayCore
import Testing

/// The in-flight limit follows queueing while demand exceeds it: it shrinks while that makes dispatches faster, holds
/// when it does not, grows back when latency returns, and is back at its maximum once refusals stop.
@Suite struct AdaptiveConcurrencyLimitTests {
    /// What a dispatch costs.
    enum Work {
        /// A fixed latency whatever else is in flight (a provider slow for its own reasons).
        case fixed(Double)
        /// `base` seconds of its own, after a queue served at `rate` a second (a machine past its capacity).
        case queued(base: Double, rate: Double)
    }

    /// Drives a limit as a gate does, in simulated time (steps of a thousandth of a second): `demand` dispatches want
    /// to be in flight at once.
    struct Simulation {
        var limit: AdaptiveConcurrencyLimit
        var now = 0.0
        var inFlight: [(end: Double, latency: Double)] = []
        var queueFree = 0.0

        /// Runs for `seconds`; returns the smallest limit seen.
        @discardableResult
        mutating func run(seconds: Double, demand: Int, _ work: Work) -> Int {
            var lowest = limit.current
            let end = now + seconds
            while now < end {
                let t = now
                inFlight.removeAll { d in
                    guard d.end <= t else { return false }
                    limit.record(latency: d.latency, now: t)
                    return true
                }
                while inFlight.count < demand, limit.acquire(inFlight: inFlight.count, now: now) {
                    let done: Double
                    switch work {
                    case .fixed(let latency):
                        done = now + latency
                    case .queued(let base, let rate):
                        queueFree = max(now, queueFree) + 1 / rate
                        done = queueFree + base
                    }
                    inFlight.append((done, done - now))
                }
                lowest = min(lowest, limit.current)
                now += 0.001
            }
            return lowest
        }
    }

    @Test func aLoadThatNeverReachesTheLimitNeverMovesItHoweverSlowItGets() {
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256))
        #expect(s.limit.current == 256)
        s.run(seconds: 2, demand: 8, .fixed(0.002))
        // Busier and fifteen times slower (a closed loop of 64 clients on a saturated machine), still under the limit.
        s.run(seconds: 5, demand: 64, .fixed(0.030))
        #expect(s.limit.current == 256)
        #expect(abs((s.limit.unloadedLatency ?? 0) - 0.002) < 1e-9)
    }

    @Test func queueingBehindTheLimitShrinksItUntilTheLatencyIsTolerated() {
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256, allowance: 0.010))
        s.run(seconds: 1, demand: 4, .queued(base: 0.002, rate: 2000))
        // Past capacity: 2,000 want in, served at 2,000 a second; at 256 in flight each waits 128 ms.
        s.run(seconds: 3, demand: 2000, .queued(base: 0.002, rate: 2000))
        // 2 ms + 10 ms tolerated: about 20 in flight.
        #expect(s.limit.current >= 8 && s.limit.current <= 32, "\(s.limit.current)")
        // The work gets ten times cheaper: the limit grows back, to about 200 (10 ms of queue at 20,000 a second).
        s.run(seconds: 20, demand: 2000, .queued(base: 0.002, rate: 20_000))
        #expect(s.limit.current >= 150, "\(s.limit.current)")
    }

    @Test func latencyThatLimitingCannotHelpGivesUpLimitingForAWhile() {
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256, giveUpHold: 10))
        s.run(seconds: 1, demand: 4, .fixed(0.002))
        // Past capacity, but every dispatch takes 200 ms whatever the limit (a provider slow for its own reasons):
        // down to the minimum nothing gets faster, so the limit goes back to the maximum.
        var lowest = 256
        var gaveUpAt: Double?
        while gaveUpAt == nil, s.now < 20 {
            lowest = min(lowest, s.run(seconds: 0.05, demand: 2000, .fixed(0.200)))
            if lowest == 8, s.limit.current == 256 { gaveUpAt = s.now }
        }
        #expect(gaveUpAt != nil, "tried down to the minimum, then back to the maximum")
        // It stays there for the hold instead of refusing more for nothing; then it is tried again.
        let held = s.run(seconds: 9.5, demand: 2000, .fixed(0.200))
        #expect(held == 256)
        let again = s.run(seconds: 3, demand: 2000, .fixed(0.200))
        #expect(again < 256)
    }

    @Test func aMachineSaturatedByOtherWorkIsNotLimitedForNothing() {
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 16, maximum: 256, giveUpHold: 10))
        s.run(seconds: 1, demand: 4, .fixed(0.002))
        // Every dispatch now spends 100 ms elsewhere after a queue served at 2,000 a second. Shrinking saves some
        // queueing, but even 16 in flight take 108 ms, nine times the 12 ms tolerated.
        let descent = s.run(seconds: 6, demand: 2000, .queued(base: 0.100, rate: 2000))
        #expect(descent == 16)
        #expect(s.limit.current == 256)
    }

    @Test func spikesAtTheMinimumDoNotEndTheLimiting() {
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 16, maximum: 256))
        s.run(seconds: 1, demand: 4, .fixed(0.002))
        s.run(seconds: 3, demand: 2000, .queued(base: 0.002, rate: 1000))
        #expect(s.limit.current <= 24)
        // A slow epoch now and then (a pause elsewhere), between ordinary ones.
        for _ in 0..<5 {
            s.run(seconds: 0.2, demand: 2000, .fixed(0.060))
            s.run(seconds: 0.5, demand: 2000, .queued(base: 0.002, rate: 1000))
        }
        #expect(s.limit.current <= 24)
    }

    @Test func aSlowProvidersOwnLatencyIsNotQueueing() {
        // A provider 150 ms away: a latency up to twice that is tolerated even while dispatches are refused.
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 64))
        s.run(seconds: 1, demand: 10, .fixed(0.150))
        s.run(seconds: 3, demand: 500, .fixed(0.280))
        #expect(s.limit.current == 64)
        // A queue behind the limit on top of it (served at 100 a second: 640 ms at 64 in flight) does shrink it.
        s.run(seconds: 15, demand: 500, .queued(base: 0.150, rate: 100))
        #expect(s.limit.current <= 40, "\(s.limit.current)")
        // And it stays down while the overload lasts: every dispatch queues, but that is not the new normal.
        s.run(seconds: 20, demand: 500, .queued(base: 0.150, rate: 100))
        #expect(s.limit.current <= 40, "\(s.limit.current)")
        #expect(abs((s.limit.unloadedLatency ?? 0) - 0.150) < 0.02)
    }

    @Test func refusalsStoppingBringTheMaximumBackAfterTheRecoveryTime() {
        var s = Simulation(limit: AdaptiveConcurrencyLimit(minimum: 8, maximum: 256, recovery: 5))
        s.run(seconds: 1, demand: 4, .fixed(0.002))
        s.run(seconds: 2, demand: 2000, .queued(base: 0.002, rate: 2000))
        #expect(s.limit.current <= 32)
        // Demand falls under the limit: nothing is refused, and the maximum is not back yet.
        s.run(seconds: 4, demand: 2, .fixed(0.002))
        #expect(s.limit.current < 256)
        // Five seconds after the last refusal a burst finds the whole maximum, even with no dispatch in between.
        let admitted = s.limit.acquire(inFlight: 200, now: s.now + 1.1)
        #expect(admitted)
        #expect(s.limit.current == 256)
    }

    @Test func theUnloadedLatencyIsForgottenAfterTheWindow() {
        var l = AdaptiveConcurrencyLimit(minimum: 8, maximum: 256, window: 10)
        l.record(latency: 0.002, now: 0)
        l.record(latency: 0.050, now: 6)
        #expect(l.unloadedLatency == 0.002, "the half before is still remembered")
        l.record(latency: 0.050, now: 11)
        #expect(l.unloadedLatency == 0.050, "a provider lastingly slower is the new normal after a window")
        l.record(latency: .nan, now: 12)
        l.record(latency: -1, now: 12)
        #expect(l.unloadedLatency == 0.050, "impossible latencies are ignored")
    }
}
