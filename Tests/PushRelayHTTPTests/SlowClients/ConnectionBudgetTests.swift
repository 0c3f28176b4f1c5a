import NIOCore
import NIOEmbedded
import PushRelayCore
import PushRelayHTTP
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The per-address connection budget at accept: a connection within it is counted until it closes; one past it is
/// refused there, with nothing read from it or written to it, and reset after the refusal delay (at once when the
/// address already has as many refused connections waiting as its budget).
///
/// ThreadSanitizer: the per-address counts, taken at accept and given back at close on other event loops.
@Suite struct ConnectionBudgetTests {
    static let client = "198.51.100.7"

    static func accepted(from address: String = client) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let peer = try SocketAddress(ipAddress: address, port: 40_000)
        try channel.connect(to: peer).wait()
        channel.remoteAddress = peer
        return channel
    }

    @Test func admissionsWithinTheBudgetThenRefusalsThatWaitThenRefusalsAtOnce() {
        let budget = ConnectionBudget(limitPerAddress: 2, clock: ManualClock())
        #expect(budget.admit(Self.client) == .admitted)
        #expect(budget.admit(Self.client) == .admitted)
        #expect(budget.admit(Self.client) == .refusedAfterDelay)
        #expect(budget.admit(Self.client) == .refusedAfterDelay)
        #expect(budget.admit(Self.client) == .refused)
        #expect(budget.admit("203.0.113.9") == .admitted, "each address has its own budget")
        #expect(budget.count(Self.client) == 2 && budget.refusedCount(Self.client) == 2)

        budget.releaseRefused(Self.client)
        #expect(budget.admit(Self.client) == .refusedAfterDelay)
        budget.release(Self.client)
        #expect(budget.admit(Self.client) == .admitted)
    }

    @Test func aConnectionWithinTheBudgetCountsUntilItCloses() throws {
        let budget = ConnectionBudget(limitPerAddress: 2, clock: ManualClock())
        let channel = try Self.accepted()
        #expect(budget.accept(channel, trustedProxies: TrustedProxies()))
        #expect(channel.isActive, "left open")
        #expect(budget.count(Self.client) == 1)
        _ = try channel.finish()
        #expect(budget.count(Self.client) == 0)
    }

    @Test func aConnectionPastTheBudgetIsResetAfterTheDelayUnreadAndUnanswered() throws {
        let clock = ManualClock()
        let budget = ConnectionBudget(limitPerAddress: 1, refusalDelay: .seconds(1), clock: clock)
        let held = try Self.accepted()
        #expect(budget.accept(held, trustedProxies: TrustedProxies()))

        let refused = try Self.accepted()
        #expect(!budget.accept(refused, trustedProxies: TrustedProxies()))
        clock.advance(by: .milliseconds(999))
        #expect(refused.isActive, "held for the delay")
        #expect(budget.refusedCount(Self.client) == 1)
        clock.advance(by: .milliseconds(1))
        refused.embeddedEventLoop.run()
        #expect(!refused.isActive, "closed after the delay")
        #expect(try refused.readOutbound(as: ByteBuffer.self) == nil, "nothing written")
        #expect(budget.refusedCount(Self.client) == 0)
        #expect(budget.count(Self.client) == 1, "a refusal releases nothing of the budget")

        // Once the admitted one closes, the address is admitted again.
        _ = try held.finish()
        #expect(budget.accept(try Self.accepted(), trustedProxies: TrustedProxies()))
    }

    @Test func pastTheRefusedConnectionsAnAddressMayHaveWaitingOneIsResetAtOnce() throws {
        let budget = ConnectionBudget(limitPerAddress: 1, clock: ManualClock())
        #expect(budget.accept(try Self.accepted(), trustedProxies: TrustedProxies()))
        let waiting = try Self.accepted()
        #expect(!budget.accept(waiting, trustedProxies: TrustedProxies()))
        #expect(waiting.isActive)

        let refused = try Self.accepted()
        #expect(!budget.accept(refused, trustedProxies: TrustedProxies()))
        #expect(!refused.isActive, "closed at accept")
        #expect(try refused.readOutbound(as: ByteBuffer.self) == nil, "nothing written")
        #expect(budget.refusedCount(Self.client) == 1)
    }

    @Test func theAddressesOfOneIPv6Slash64ShareOneBudget() throws {
        let budget = ConnectionBudget(limitPerAddress: 2, clock: ManualClock())
        #expect(budget.admit("2001:db8:1:2::1") == .admitted)
        #expect(budget.admit("2001:db8:1:2:aaaa::2") == .admitted)
        #expect(budget.admit("2001:db8:1:2:ffff:ffff:ffff:ffff") == .refusedAfterDelay, "a third address of the /64 is past the budget")
        #expect(budget.admit("2001:db8:1:3::1") == .admitted, "the next /64 has its own")
        #expect(budget.count("2001:db8:1:2::99") == 2)
        // Connections accepted from two addresses of one /64 count together, and each releases its place on close.
        let other = ConnectionBudget(limitPerAddress: 2, clock: ManualClock())
        let first = try Self.accepted(from: "2001:db8:5:6::1")
        let second = try Self.accepted(from: "2001:db8:5:6::2")
        #expect(other.accept(first, trustedProxies: TrustedProxies()))
        #expect(other.accept(second, trustedProxies: TrustedProxies()))
        let third = try Self.accepted(from: "2001:db8:5:6:1:2:3:4")
        #expect(!other.accept(third, trustedProxies: TrustedProxies()), "refused: the /64 holds its budget")
        _ = try first.finish()
        #expect(other.count("2001:db8:5:6::") == 1)
        #expect(other.accept(try Self.accepted(from: "2001:db8:5:6::3"), trustedProxies: TrustedProxies()))
    }

    @Test func anIPv4MappedAddressCountsAsItsIPv4Address() {
        let budget = ConnectionBudget(limitPerAddress: 1, clock: ManualClock())
        #expect(budget.admit(Self.client) == .admitted)
        #expect(budget.admit("::ffff:\(Self.client)") == .refusedAfterDelay)
    }

    @Test func aTrustedProxysConnectionsAreNotCounted() throws {
        let budget = ConnectionBudget(limitPerAddress: 1, clock: ManualClock())
        let proxies = TrustedProxies(networks: [OutboundAddressPolicy.Network(cidr: "10.0.0.0/8")!])
        for _ in 0..<3 {
            let channel = try Self.accepted(from: "10.1.2.3")
            #expect(budget.accept(channel, trustedProxies: proxies))
            #expect(channel.isActive)
        }
        #expect(budget.count("10.1.2.3") == 0)
    }

    @Test func aConnectionWithoutAnIPAddressIsNotCounted() throws {
        let budget = ConnectionBudget(limitPerAddress: 1, clock: ManualClock())
        for _ in 0..<2 {
            let channel = EmbeddedChannel()
            channel.remoteAddress = try SocketAddress(unixDomainSocketPath: "/tmp/pushrelay.sock")
            #expect(budget.accept(channel, trustedProxies: TrustedProxies()))
        }
    }
}
