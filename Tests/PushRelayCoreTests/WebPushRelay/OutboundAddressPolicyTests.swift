import PushRelayCore
import Testing

/// Where PushRelay may connect when a caller chose the URL (a WebPush endpoint, an `Unsubscribe-URL`): public
/// addresses only, unless the operator lists a network. Resolving a host name and checking every address it has is
/// `OutboundAddressGuard`'s (PushRelayProviderTests/WebPush).
@Suite struct OutboundAddressPolicyTests {
    typealias Policy = OutboundAddressPolicy

    static func address(_ s: String) -> Policy.Address { Policy.Address(s)! }

    @Test(arguments: [
        ("127.0.0.1", Policy.Category.loopback), ("127.255.0.9", .loopback), ("::1", .loopback),
        ("10.0.0.1", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.254", .privateNetwork),
        ("192.168.1.1", .privateNetwork), ("fc00::1", .privateNetwork), ("fd12:3456::1", .privateNetwork),
        ("169.254.169.254", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified), ("::", .unspecified),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
        ("100.64.0.1", .sharedAddressSpace), ("255.255.255.255", .reserved), ("240.0.0.1", .reserved),
        // IPv6 forms of IPv4 addresses are judged by the IPv4 address they carry.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::ffff:10.1.2.3", .privateNetwork),
        ("64:ff9b::a9fe:a9fe", .linkLocal), ("::192.168.0.1", .privateNetwork), ("[::1]", .loopback), ("fe80::1%eth0", .linkLocal),
    ])
    func nonPublicAddressesAreRefusedByDefault(_ text: String, _ category: Policy.Category) {
        let a = Self.address(text)
        #expect(Policy.category(of: a) == category)
        #expect(Policy().check(a) == .refused(a, category))
    }

    @Test(arguments: [
        "8.8.8.8", "142.250.74.106", "172.15.255.255", "172.32.0.1", "192.169.0.1", "100.128.0.1", "169.253.1.1",
        "2a00:1450:4001:82b::200a", "2001:4860:4860::8888", "::ffff:8.8.8.8", "fbff::1",
    ])
    func publicAddressesAreAllowed(_ text: String) throws {
        let a = try #require(Policy.Address(text))
        #expect(Policy.category(of: a) == nil, "\(text)")
        #expect(Policy().check(a) == .allowed)
    }

    @Test func anAllowedNetworkOpensOnlyItself() throws {
        let policy = Policy(allowedNetworks: [try #require(Policy.Network(cidr: "127.0.0.1/32")), try #require(Policy.Network(cidr: "fd00::/8"))])
        #expect(policy.check(Self.address("127.0.0.1")) == .allowed)
        #expect(policy.check(Self.address("::ffff:127.0.0.1")) == .allowed, "the mapped form of an allowed address")
        #expect(policy.check(Self.address("127.0.0.2")) == .refused(Self.address("127.0.0.2"), .loopback))
        #expect(policy.check(Self.address("fd99::5")) == .allowed)
        #expect(policy.check(Self.address("fc00::5")) == .refused(Self.address("fc00::5"), .privateNetwork))
        #expect(policy.check(Self.address("10.0.0.1")) == .refused(Self.address("10.0.0.1"), .privateNetwork))
    }

    @Test func aHostIsRefusedWhenAnyOfItsAddressesIs() {
        let public1 = Self.address("8.8.8.8")
        let inside = Self.address("192.168.0.10")
        #expect(Policy().check([public1]) == .allowed)
        #expect(Policy().check([public1, inside]) == .refused(inside, .privateNetwork))
        #expect(Policy().check([]) != .allowed, "no address is no permission")
    }

    @Test func networksParseInCIDRForm() throws {
        let n = try #require(Policy.Network(cidr: "10.1.0.0/16"))
        #expect(n.contains(Self.address("10.1.200.3")))
        #expect(!n.contains(Self.address("10.2.0.1")))
        #expect(!n.contains(Self.address("::a01:1")), "an IPv4 network holds no IPv6 address")
        #expect(Policy.Network(cidr: "192.168.1.7")?.prefixLength == 32)
        #expect(Policy.Network(cidr: "fe80::/10")?.description == "fe80::/10")
        #expect(try #require(Policy.Network(cidr: "172.16.0.0/12")).contains(Self.address("172.20.1.1")))
        for bad in ["10.0.0.0/33", "10.0.0/8", "localhost", "fd00::/129", "10.0.0.0/-1", "", "010.0.0.1", "1.2.3.4/ 8"] {
            #expect(Policy.Network(cidr: bad) == nil, "\(bad)")
        }
        #expect(Policy.networks(["10.0.0.0/8", "nope"]) == .failure(.init(index: 1, text: "nope")))
    }

    @Test func addressesParseAndPrintInTheirUsualForms() {
        #expect(Policy.Address("2001:db8:0:0:0:0:0:1")?.description == "2001:db8::1")
        #expect(Policy.Address("::ffff:1.2.3.4")?.bytes.suffix(4) == [1, 2, 3, 4])
        #expect(Policy.Address("1:2:3:4:5:6:7:8")?.description == "1:2:3:4:5:6:7:8")
        for bad in ["1.2.3", "1.2.3.4.5", "256.1.1.1", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "example.org", "0x7f.0.0.1", "2130706433"] {
            #expect(Policy.Address(bad) == nil, "\(bad)")
        }
    }
}
