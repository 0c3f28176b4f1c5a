import NIOCore
import NIOPosix

/// How a provider client finds the addresses of a provider's host when it opens a connection.
///
/// Every new connection asks again: nothing is cached between connections, so once Google or Apple move a front end
/// (a GOAWAY, then the old address stops answering) the next connection goes wherever the host resolves to then.
/// A connection whose addresses were already checked (WebPush endpoints pinned by the outbound address guard) is not
/// resolved again.
public struct ProviderResolver: Sendable {
    /// Makes the resolver for one connection, on that connection's event loop; nil: NIO's getaddrinfo resolver.
    let make: (@Sendable (any EventLoop) -> any Resolver & Sendable)?

    /// The system's resolver (getaddrinfo, so `/etc/hosts` and the system's DNS settings apply): the default.
    public static let system = ProviderResolver(make: nil)

    /// A resolver from `make` for each new connection, built on the connection's event loop. It is asked for the A and
    /// AAAA addresses of every host a provider connects to by name: the endpoint's host and, for FCM, the OAuth token
    /// endpoint's, also when that host is an IP address written out.
    public init(_ make: @escaping @Sendable (any EventLoop) -> any Resolver & Sendable) {
        self.make = make
    }

    private init(make: (@Sendable (any EventLoop) -> any Resolver & Sendable)?) {
        self.make = make
    }

    /// The resolver for a connection opened on `eventLoop`; nil for the system's.
    func resolver(on eventLoop: any EventLoop) -> (any Resolver & Sendable)? {
        make?(eventLoop)
    }
}
