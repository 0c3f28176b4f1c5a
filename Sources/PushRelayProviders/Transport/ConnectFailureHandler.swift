import NIOCore

/// Fails a connection being opened with the first error its pipeline reports (TLS errors say what went wrong).
/// Once the connection is ready the promise is complete and later errors only pass on.
final class ConnectFailureHandler<Connection: Sendable>: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let ready: EventLoopPromise<Connection>

    init(ready: EventLoopPromise<Connection>) { self.ready = ready }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        ready.fail(error)
        context.fireErrorCaught(error)
    }
}
