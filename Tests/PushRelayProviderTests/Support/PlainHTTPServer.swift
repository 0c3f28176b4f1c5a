import NIOCore
import NIOHTTP1
import NIOPosix
import PushRelayCore

/// A plain HTTP/1.1 server on loopback for the HTTP/1.1 client's tests: it counts connections, records each request
/// and answers as told by the first word of the request's path (`/close`: `Connection: close`; `/slow`: after 100 ms;
/// `/silent`: never; anything else: 200 with a small JSON body, kept alive).
final class PlainHTTPServer: Sendable {
    struct Request: Sendable, Equatable {
        var method: String
        var uri: String
        var host: String?
        var body: String
    }

    private let channel: any Channel
    private let state: Locked<(connections: Int, requests: [Request])>

    var port: Int { channel.localAddress?.port ?? 0 }
    var acceptedConnections: Int { state.withLock { $0.connections } }
    var requests: [Request] { state.withLock { $0.requests } }

    init() async throws {
        let state = Locked<(connections: Int, requests: [Request])>((0, []))
        self.state = state
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                state.withLock { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    func shutdown() async {
        try? await channel.close()
    }

    private final class Responder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let state: Locked<(connections: Int, requests: [Request])>
        private let current = Locked<Request?>(nil)

        init(state: Locked<(connections: Int, requests: [Request])>) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                current.withLock {
                    $0 = Request(method: head.method.rawValue, uri: head.uri, host: head.headers.first(name: "host"), body: "")
                }
            case .body(let bytes):
                current.withLock { $0?.body += String(buffer: bytes) }
            case .end:
                guard let request = current.withLock({ $0 }) else { return }
                state.withLock { $0.requests.append(request) }
                respond(to: request, context: context)
            }
        }

        private func respond(to request: Request, context: ChannelHandlerContext) {
            let body = ByteBuffer(string: #"{"name":"ok"}"#)
            var fields = HTTPHeaders([("content-type", "application/json")])
            fields.add(name: "content-length", value: String(body.readableBytes))
            if request.uri.hasPrefix("/close") { fields.add(name: "connection", value: "close") }
            let headers = fields
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let send: @Sendable () -> Void = { [self] in
                let context = bound.value
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    if request.uri.hasPrefix("/close") { bound.value.close(promise: nil) }
                }
            }
            if request.uri.hasPrefix("/silent") { return }
            if request.uri.hasPrefix("/slow") {
                bound.value.eventLoop.scheduleTask(in: .milliseconds(100), send)
            } else {
                send()
            }
        }
    }
}
