import PushRelayCore
import Testing

/// Which address a request stands for: its connection's peer, or through trusted proxies the right-most forwarded
/// address that is not a trusted proxy.
struct TrustedProxiesTests {
    static let proxies = TrustedProxies(networks: ["127.0.0.1", "10.0.0.0/8", "fd00::/8"].map { OutboundAddressPolicy.Network(cidr: $0)! })

    @Test func anUntrustedPeerIsTheClientWhateverItsHeadersSay() {
        #expect(Self.proxies.clientAddress(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"], forwarded: ["for=198.51.100.2"]) == "203.0.113.9")
        #expect(TrustedProxies().clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1"], forwarded: []) == "127.0.0.1")
        #expect(!TrustedProxies().trusts("127.0.0.1"))
    }

    @Test func throughTrustedProxiesTheRightMostUntrustedHopIsTheClient() {
        let p = Self.proxies
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.7"], forwarded: []) == "203.0.113.7")
        // A client cannot pick its address by prepending one: the proxy appends what it saw.
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.9, 203.0.113.7"], forwarded: []) == "203.0.113.7")
        // Two proxies: the inner one (10.1.2.3) appended by the outer is skipped.
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.7", "10.1.2.3"], forwarded: []) == "203.0.113.7")
        // Every hop a trusted proxy: the left-most.
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["10.0.0.5, 10.0.0.6"], forwarded: []) == "10.0.0.5")
        // No header: the proxy itself.
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: [], forwarded: []) == "127.0.0.1")
        // A hop that is not an address (a proxy that hides it).
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["_hidden"], forwarded: []) == "unknown")
    }

    @Test func portsAndIPv6AreRead() {
        let p = Self.proxies
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.7:4711"], forwarded: []) == "203.0.113.7")
        #expect(p.clientAddress(peer: "127.0.0.1", forwardedFor: ["[2001:db8::17]:4711"], forwarded: []) == "2001:db8::17")
        #expect(p.clientAddress(peer: "fd00::1", forwardedFor: ["2001:DB8:0:0::17"], forwarded: []) == "2001:db8::17")
        #expect(p.trusts("::ffff:10.0.0.1"), "an IPv4-mapped peer is judged by its IPv4 address")
    }

    @Test func forwardedIsReadWithoutXForwardedFor() {
        let p = Self.proxies
        let line = #"for=198.51.100.9;proto=https, for="[2001:db8:cafe::17]:4711";by=10.0.0.1"#
        #expect(p.clientAddress(peer: "10.0.0.1", forwardedFor: [], forwarded: [line]) == "2001:db8:cafe::17")
        #expect(p.clientAddress(peer: "10.0.0.1", forwardedFor: [], forwarded: ["For=203.0.113.43"]) == "203.0.113.43")
        // X-Forwarded-For wins when both are there.
        #expect(p.clientAddress(peer: "10.0.0.1", forwardedFor: ["203.0.113.1"], forwarded: [line]) == "203.0.113.1")
    }
}
