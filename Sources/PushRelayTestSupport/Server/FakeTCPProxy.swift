import NIOCore
import NIOPosix
import PushRelayCore
import Synchronization

/// A TCP proxy on loopback in front of a fake, for what happens between PushRelay and a provider: `blackHole()` makes
/// every connection open now go silent (bytes in either direction are dropped, nothing is closed), as a NAT or a load
/// balancer that forgot a flow does; connections opened later pass as before.
public final class FakeTCPProxy: Sendable {
    /// One proxied connection: whether it still carries bytes.
    final class Link: Sendable {
        let silent = Atomic<Bool>(false)
    }

    private struct State {
        var target: SocketAddress?
        var listener: (any Channel)?
        var links: [Link] = []
        var accepted = 0
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let state = Locked(State())

    public init() {}

    /// Where connections go: `127.0.0.1:port`. Set it before the first connection arrives.
    public func forward(toPort port: Int) throws {
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        state.withLock { $0.target = target }
    }

    /// Listens on `host:port` (a loopback address; port 0 picks a free one) and returns the port. Linux routes all of
    /// 127/8 to loopback, so two proxies can listen on one port at two addresses: one host name's old and new address.
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let state = self.state
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { client in
                let link = Link()
                let target = state.withLock { s -> SocketAddress? in
                    s.links.append(link)
                    s.accepted += 1
                    return s.target
                }
                guard let target else { return client.close() }
                return ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { upstream in
                        upstream.eventLoop.makeCompletedFuture {
                            try upstream.pipeline.syncOperations.addHandler(ProxyForwarder(to: client, link: link))
                        }
                    }
                    .connect(to: target)
                    .flatMap { upstream in
                        client.eventLoop.makeCompletedFuture {
                            try client.pipeline.syncOperations.addHandler(ProxyForwarder(to: upstream, link: link))
                        }.flatMap { client.setOption(.autoRead, value: true) }
                    }
            }
        let listener = try await bootstrap.bind(host: host, port: port).get()
        state.withLock { $0.listener = listener }
        guard let port = listener.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return port
    }

    /// Every connection open now goes silent and stays open.
    public func blackHole() {
        for link in state.withLock({ $0.links }) { link.silent.store(true, ordering: .relaxed) }
    }

    /// Takes no more connections (a connect is refused); the connections open now carry on.
    public func stopListening() async {
        let listener = state.withLock { s -> (any Channel)? in
            defer { s.listener = nil }
            return s.listener
        }
        try? await listener?.close()
    }

    /// TCP connections accepted so far.
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    public func shutdown() async {
        let listener = state.withLock { $0.listener }
        try? await listener?.close()
        try? await group.shutdownGracefully()
    }
}

/// Writes what one side reads to the other, unless the link went silent; closes the other side when this one closes.
final class ProxyForwarder: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let other: any Channel
    private let link: FakeTCPProxy.Link

    init(to other: any Channel, link: FakeTCPProxy.Link) {
        self.other = other
        self.link = link
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !link.silent.load(ordering: .relaxed) else { return }
        other.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        other.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
