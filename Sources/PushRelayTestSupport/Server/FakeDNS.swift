import NIOCore
import NIOPosix
import PushRelayCore

/// A DNS for tests whose answers change while a client runs: a name answers the addresses last set for it, an IP
/// address answers itself, anything else is not found. `resolver(on:)` makes one NIO `Resolver` for one connection
/// (what a provider's `ProviderResolver` asks for); `lookups(of:)` counts the connections that looked a name up.
public final class FakeDNS: Sendable {
    private struct State {
        var addresses: [String: [String]] = [:]
        var lookups: [String: Int] = [:]
    }

    private let state = Locked(State())

    public init() {}

    /// From now on `name` (case-insensitive) resolves to `addresses` (IPv4 or IPv6, written out).
    public func set(_ name: String, to addresses: [String]) {
        state.withLock { $0.addresses[name.lowercased()] = addresses }
    }

    /// How many connections looked `name` up so far.
    public func lookups(of name: String) -> Int {
        state.withLock { $0.lookups[name.lowercased(), default: 0] }
    }

    /// A resolver for one connection opened on `eventLoop`.
    public func resolver(on eventLoop: any EventLoop) -> any Resolver & Sendable {
        FakeDNSResolver(dns: self, eventLoop: eventLoop)
    }

    /// The answer to one query: the addresses of `host` in one family, with `port`. `counted` counts the lookup (once
    /// per connection: the A query).
    func answer(_ host: String, port: Int, family: NIOBSDSocket.ProtocolFamily, counted: Bool) throws -> [SocketAddress] {
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            return literal.protocol == family ? [literal] : []
        }
        let name = host.lowercased()
        let written = state.withLock { s -> [String]? in
            if counted { s.lookups[name, default: 0] += 1 }
            return s.addresses[name]
        }
        guard let written else { throw FakeDNSError.notFound(host) }
        return try written.map { try SocketAddress(ipAddress: $0, port: port) }.filter { $0.protocol == family }
    }
}

/// A name `FakeDNS` holds no address for.
public enum FakeDNSError: Error {
    case notFound(String)
}

/// One connection's resolver: both queries answered at once from `FakeDNS`.
final class FakeDNSResolver: Resolver, Sendable {
    private let dns: FakeDNS
    private let eventLoop: any EventLoop

    init(dns: FakeDNS, eventLoop: any EventLoop) {
        self.dns = dns
        self.eventLoop = eventLoop
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        eventLoop.makeCompletedFuture { try dns.answer(host, port: port, family: .inet, counted: true) }
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        eventLoop.makeCompletedFuture { try dns.answer(host, port: port, family: .inet6, counted: false) }
    }

    func cancelQueries() {}
}
