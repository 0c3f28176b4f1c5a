import PushRelayCore
import Testing

/// The key every per-address bound counts a client under: an IPv6 client's /64, an IPv4 client's address.
@Suite struct AddressKeyTests {
    @Test func ipv6AddressesAreKeyedByTheirSlash64() {
        #expect(AddressKey.key(for: "2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
        #expect(AddressKey.key(for: "2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(AddressKey.key(for: "[2001:DB8:1:2::ffff]") == "2001:db8:1:2::/64", "brackets and case do not matter")
        #expect(AddressKey.key(for: "fe80::1%eth0") == "fe80::/64", "a zone does not matter")
        #expect(AddressKey.key(for: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
    }

    @Test func ipv4AndIPv4MappedAddressesAreKeyedByTheIPv4Address() {
        #expect(AddressKey.key(for: "192.0.2.1") == "192.0.2.1")
        #expect(AddressKey.key(for: "::ffff:192.0.2.1") == "192.0.2.1")
        #expect(AddressKey.key(for: "::ffff:c000:201") == "192.0.2.1")
    }

    @Test func whatIsNotAnAddressIsKeyedByItself() {
        #expect(AddressKey.key(for: "unknown") == "unknown")
        #expect(AddressKey.key(for: "192.0.2.1:443") == "192.0.2.1:443")
    }
}
