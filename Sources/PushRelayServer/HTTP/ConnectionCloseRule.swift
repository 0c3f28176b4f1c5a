import NIOCore
import NIOHTTP1

/// Which requests end their connection once answered, as HTTP/1.x says: an HTTP/1.0 request without
/// `Connection: keep-alive`, any request with `Connection: close`, and CONNECT (what would follow it on the connection
/// is a tunnel, which PushRelay does not offer).
///
/// The HTTP types the rest of the server reads carry no protocol version, so this handler sits right after NIO's
/// HTTP/1 codec. It writes the decision into the request as `Connection: close`, which the Home Assistant fast path
/// and Hummingbird's connection handler both honour by closing the connection after the answer, and it makes sure
/// that answer says `Connection: close` too, whoever wrote it.
final class ConnectionCloseRule: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The requests read and not yet answered, in order, and whether each ends the connection.
    struct State {
        private var pending: [Bool] = []

        /// A request arrived: `head` as the rest of the server should see it.
        mutating func received(_ head: HTTPRequestHead) -> HTTPRequestHead {
            let closes = ConnectionCloseRule.closesAfterAnswer(head)
            pending.append(closes)
            guard closes else { return head }
            var head = head
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return head
        }

        /// An answer's head is written: the head to write (informational heads pass unchanged).
        func answering(_ head: HTTPResponseHead) -> HTTPResponseHead {
            guard head.status.code >= 200, pending.first == true else { return head }
            var head = head
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return head
        }

        /// An answer is complete.
        mutating func answered() {
            if !pending.isEmpty { pending.removeFirst() }
        }
    }

    /// Whether the connection must close once `head` is answered.
    static func closesAfterAnswer(_ head: HTTPRequestHead) -> Bool {
        !head.isKeepAlive || head.method == .CONNECT
    }

    private var state = State()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        context.fireChannelRead(wrapInboundOut(.head(state.received(head))))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            context.write(wrapOutboundOut(.head(state.answering(head))), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            state.answered()
            context.write(data, promise: promise)
        }
    }
}
