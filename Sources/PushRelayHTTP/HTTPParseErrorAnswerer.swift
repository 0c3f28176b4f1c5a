import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import PushRelayCore

/// Answers a request NIO's HTTP/1.1 decoder cannot parse (a garbage request line, a bad header, a non-ASCII target,
/// a broken chunked body) with a JSON error, then closes the connection: the decoder accepts nothing more from it.
///
/// It sits right after the decoder, before the websocket upgrade handler, so it also covers the first request of a
/// connection (before this handler, such connections stayed open with no answer: Hummingbird's own handling of parse
/// errors only starts after the upgrade handler). Requests parsed completely before the bad bytes are answered first,
/// in order: the error answer waits until their responses have ended.
///
/// An `Upgrade` offer for anything but a websocket (`Upgrade: h2c`, as `curl --http2` sends) is declined here: the
/// request goes on without its `Upgrade` header and with `Connection: close`, so it is answered as plain HTTP/1.1 and
/// the connection then closes (NIO's decoder parses nothing after an upgrade request). Left to NIO's upgrade handler,
/// such a request lost its head on the way to Hummingbird, and the connection closed with no answer.
///
/// From a websocket upgrade request on, the handler only passes everything through untouched: once the upgrade
/// handler takes the HTTP decoder out, the bytes the client sent right behind its upgrade request (a first websocket
/// frame) come through here as raw bytes, not HTTP parts, and so do the frames written back. The websocket upgrade then
/// removes the handler (`remove(from:)`).
package final class HTTPParseErrorAnswerer: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// Completes the error's head as every answer's is.
    private let head: ResponseHead
    /// Requests received whose response has not ended.
    private var unanswered = 0
    /// Inside a request (its head came, its end not yet).
    private var inRequest = false
    /// A response has started and not ended.
    private var responding = false
    private var failed = false
    /// Everything passes through untouched (an upgrade is under way).
    private var passthrough = false
    /// The parse error, held until the complete requests before it are answered.
    private var pending: HTTPParserError?

    package init(head: ResponseHead) {
        self.head = head
    }

    /// Takes the handler out of a pipeline being upgraded to a websocket.
    package static func remove(from channel: any Channel) {
        if let handler = try? channel.pipeline.syncOperations.handler(type: HTTPParseErrorAnswerer.self) {
            channel.pipeline.syncOperations.removeHandler(handler, promise: nil)
        }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !passthrough else { return context.fireChannelRead(data) }
        switch unwrapInboundIn(data) {
        case .head(var head):
            unanswered += 1
            inRequest = true
            if head.headers.contains(name: "upgrade") {
                guard head.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) else {
                    head.headers.remove(name: "upgrade")
                    head.headers.replaceOrAdd(name: "connection", value: "close")
                    return context.fireChannelRead(wrapInboundOut(.head(head)))
                }
                passthrough = true
            }
        case .body: break
        case .end: inRequest = false
        }
        context.fireChannelRead(data)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !passthrough, let parseError = error as? HTTPParserError, !failed else {
            context.fireErrorCaught(error)
            return
        }
        failed = true
        pending = parseError
        answerIfDue(context: context)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !passthrough else { return context.write(data, promise: promise) }
        let ended: Bool
        switch unwrapOutboundIn(data) {
        case .head(let head):
            ended = false
            if head.status.code >= 200 { responding = true }  // a 1xx is followed by the final response
        case .body:
            ended = false
        case .end:
            ended = true
            responding = false
        }
        context.write(data, promise: promise)
        if ended {
            unanswered = max(unanswered - 1, 0)
            answerIfDue(context: context)
        }
    }

    /// Once every complete request before the bad bytes is answered (a request cut short by them never will be):
    /// the JSON error (unless a response is under way, which only a close can end), the close, and the error passed on
    /// to whoever still waits for a request part.
    private func answerIfDue(context: ChannelHandlerContext) {
        guard let error = pending, unanswered - (inRequest ? 1 : 0) <= 0 else { return }
        pending = nil
        if !responding {
            let answer = head.closing(APIError.notHTTP(error))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(answer.head))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: answer.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        context.close(promise: nil)
        context.fireErrorCaught(error)
    }
}
