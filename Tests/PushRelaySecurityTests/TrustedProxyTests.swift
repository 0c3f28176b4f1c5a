import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `http.trusted_proxies` on a real server (every test connection comes from 127.0.0.1): forwarding headers name the
/// client only when the connection comes from a trusted proxy.
@Suite struct TrustedProxyTests {
    static let adminToken = "trusted-proxy-admin-token-0123456789"

    static func configure(trusted: [String]) -> @Sendable (inout PushRelayConfig) -> Void {
        { c in
            c.adminToken = adminToken
            c.maxFailedAuthsPerMinute = 3
            c.http.trustedProxies = TrustedProxies(networks: trusted.map { OutboundAddressPolicy.Network(cidr: $0)! })
        }
    }

    static func admin(_ s: TestServer, token: String, forwardedFor: String) async throws -> HTTPReply {
        try await s.request(.GET, "/admin/v1/quotas", headers: [("Authorization", "Bearer \(token)"), ("X-Forwarded-For", forwardedFor)])
    }

    @Test(arguments: [[], ["10.0.0.0/8"]])
    func aForgedHeaderFromAnUntrustedPeerChangesNothing(trusted: [String]) async throws {
        try await TestServer.with(configure: Self.configure(trusted: trusted)) { (s: TestServer) async throws in
            for n in 1...3 {
                expectJSONError(try await Self.admin(s, token: "wrong", forwardedFor: "198.51.100.\(n)"), status: 401)
            }
            // Whatever address the header claims, the budget is 127.0.0.1's, and it is spent.
            let blocked = try await Self.admin(s, token: Self.adminToken, forwardedFor: "203.0.113.50")
            expectJSONError(blocked, status: 429)
        }
    }

    @Test func behindATrustedProxyEachClientHasItsOwnBudget() async throws {
        try await TestServer.with(configure: Self.configure(trusted: ["127.0.0.1"])) { (s: TestServer) async throws in
            for _ in 1...3 {
                expectJSONError(try await Self.admin(s, token: "wrong", forwardedFor: "203.0.113.7"), status: 401)
            }
            expectJSONError(try await Self.admin(s, token: Self.adminToken, forwardedFor: "203.0.113.7"), status: 429)
            // Another client behind the same proxy is not blocked.
            #expect(try await Self.admin(s, token: Self.adminToken, forwardedFor: "198.51.100.9").status == 200)
            // The blocked client cannot borrow the other's address: the proxy appends what it saw, the right-most.
            expectJSONError(try await Self.admin(s, token: Self.adminToken, forwardedFor: "198.51.100.9, 203.0.113.7"), status: 429)
        }
    }

    @Test func aTrustedProxyIsNotHeldToOneAddresssConnectionBudget() async throws {
        try await TestServer.with(configure: { c in
            c.http.maxConnectionsPerAddress = 1
            c.http.trustedProxies = TrustedProxies(networks: [OutboundAddressPolicy.Network(cidr: "127.0.0.1")!])
        }) { (s: TestServer) async throws in
            var held: [Int32] = []
            defer { for fd in held { close(fd) } }
            for _ in 0..<3 {
                let fd = try #require(LoopbackSocket.connect(port: s.port, receiveTimeoutMicroseconds: 100_000))
                held.append(fd)
                #expect(try await LoopbackSocket.answersHealth(fd), "the proxy's connections carry many clients")
            }
        }
    }
}
