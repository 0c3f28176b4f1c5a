import Foundation
import PushRelayWebPushRelay
import Testing

@testable import PushRelayServer

/// The relay's per-sender limit counts an IPv6 sender's whole /64 as one sender, so a sender holding a /64 cannot
/// spend a fresh limit from each of its addresses.
@Suite struct SenderRateLimiterTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theAddressesOfOneIPv6Slash64ShareOneLimit() {
        let limiter = SenderRateLimiter(limit: 2)
        #expect(limiter.allow("2001:db8:1:2::1", now: Self.now))
        #expect(limiter.allow("2001:db8:1:2:aaaa:bbbb:cccc:dddd", now: Self.now))
        #expect(!limiter.allow("2001:db8:1:2::ffff", now: Self.now), "a third address of the /64 is past the limit")
        #expect(limiter.allow("2001:db8:1:3::1", now: Self.now), "the next /64 has its own")
        #expect(limiter.allow("2001:db8:1:2::1", now: Self.now + 60), "a new minute")
    }

    @Test func anIPv4SenderCountsAloneAndItsMappedSpellingWithIt() {
        let limiter = SenderRateLimiter(limit: 1)
        #expect(limiter.allow("192.0.2.1", now: Self.now))
        #expect(!limiter.allow("::ffff:192.0.2.1", now: Self.now))
        #expect(limiter.allow("192.0.2.2", now: Self.now))
    }
}
