import Foundation
import PushRelaySecurity
import Testing

@testable import PushRelayServer

/// Which addresses share a failed-credential budget: an IPv6 client's whole /64, so that an attacker holding a /64
/// cannot spend a fresh budget from each of its addresses; an IPv4 client alone.
@Suite struct FailedAuthLimiterPrefixTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func ipv6AddressesAreKeyedByTheirSlash64() {
        #expect(FailedAuthLimiter.key(for: "2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
        #expect(FailedAuthLimiter.key(for: "2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(FailedAuthLimiter.key(for: "[2001:DB8:1:2::ffff]") == "2001:db8:1:2::/64", "brackets and case do not matter")
        #expect(FailedAuthLimiter.key(for: "fe80::1%eth0") == "fe80::/64", "a zone does not matter")
        #expect(FailedAuthLimiter.key(for: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(FailedAuthLimiter.key(for: "::1") == "::/64")
    }

    @Test func ipv4AndIPv4MappedAddressesAreKeyedByTheIPv4Address() {
        #expect(FailedAuthLimiter.key(for: "192.0.2.1") == "192.0.2.1")
        #expect(FailedAuthLimiter.key(for: "192.0.2.2") == "192.0.2.2")
        #expect(FailedAuthLimiter.key(for: "::ffff:192.0.2.1") == "192.0.2.1")
        #expect(FailedAuthLimiter.key(for: "::ffff:c000:201") == "192.0.2.1", "the hexadecimal spelling too")
        #expect(FailedAuthLimiter.key(for: "[::ffff:192.0.2.1]") == "192.0.2.1")
    }

    @Test func whatIsNotAnAddressIsKeyedByItself() {
        #expect(FailedAuthLimiter.key(for: "unknown") == "unknown")
        #expect(FailedAuthLimiter.key(for: "") == "")
        #expect(FailedAuthLimiter.key(for: "192.0.2.1:443") == "192.0.2.1:443")
    }

    @Test func twoAddressesInOneSlash64ShareOneBudget() {
        let limiter = FailedAuthLimiter(limit: 3)
        #expect(!limiter.recordFailure("2001:db8:1:2::1", now: Self.now))
        #expect(!limiter.recordFailure("2001:db8:1:2::2", now: Self.now))
        #expect(limiter.recordFailure("2001:db8:1:2:dead:beef:0:1", now: Self.now), "the third failure from the /64 blocks it")
        #expect(limiter.isBlocked("2001:db8:1:2::99", now: Self.now), "any address of the /64 is refused")
        #expect(!limiter.isBlocked("2001:db8:1:3::1", now: Self.now), "the next /64 has its own budget")
        #expect(!limiter.isBlocked("2001:db8:1:1::1", now: Self.now))
    }

    @Test func ipv4AddressesKeepTheirOwnBudgetsAndMappedOnesShareThem() {
        let limiter = FailedAuthLimiter(limit: 2)
        #expect(!limiter.recordFailure("192.0.2.1", now: Self.now))
        #expect(limiter.recordFailure("::ffff:192.0.2.1", now: Self.now), "the mapped spelling is the same client")
        #expect(limiter.isBlocked("192.0.2.1", now: Self.now))
        #expect(!limiter.isBlocked("192.0.2.2", now: Self.now), "an IPv4 neighbour is not affected")
        #expect(!limiter.isBlocked("::ffff:192.0.2.2", now: Self.now))
    }
}
