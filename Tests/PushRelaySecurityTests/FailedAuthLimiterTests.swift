import Foundation
import PushRelaySecurity
import Testing

@testable import PushRelayServer

/// The per-address limit on failed authentication: blocked at the limit, forgotten after a quiet time.
///
/// ThreadSanitizer: the per-address counts, kept under one lock for every connection.
@Suite struct FailedAuthLimiterTests {
    static func at(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: 1_800_000_000 + seconds) }

    @Test func blocksAtTheLimitPerAddressAndForgetsWithinTwoMinutes() {
        let limiter = FailedAuthLimiter(limit: 3)
        let t0 = Self.at(0)
        #expect(!limiter.recordFailure("10.0.0.1", now: t0))
        #expect(!limiter.recordFailure("10.0.0.1", now: t0))
        #expect(!limiter.isBlocked("10.0.0.1", now: t0))
        #expect(limiter.recordFailure("10.0.0.1", now: t0), "the third failure blocks")
        #expect(limiter.isBlocked("10.0.0.1", now: t0))
        #expect(!limiter.isBlocked("10.0.0.2", now: t0), "other addresses are not affected")
        // Early in the next minute the previous one still weighs almost fully (no burst of 2× at a boundary)…
        #expect(limiter.isBlocked("10.0.0.1", now: Self.at(60)))
        // …and it fades as the minute passes; two minutes on, it is forgotten.
        #expect(!limiter.isBlocked("10.0.0.1", now: Self.at(110)))
        #expect(!limiter.isBlocked("10.0.0.1", now: Self.at(130)))
    }

    @Test func aQuietMinuteForgetsEverything() {
        let limiter = FailedAuthLimiter(limit: 2)
        limiter.recordFailure("a", now: Self.at(0))
        limiter.recordFailure("a", now: Self.at(1))
        #expect(limiter.isBlocked("a", now: Self.at(2)))
        #expect(!limiter.isBlocked("a", now: Self.at(125)), "windows more than a minute apart do not carry over")
    }
}
