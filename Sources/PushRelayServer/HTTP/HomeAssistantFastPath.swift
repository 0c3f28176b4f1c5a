import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PushRelayCore
import Synchronization

/// Home Assistant's notify POSTs, answered from the connection's NIO pipeline instead of Hummingbird's router.
///
/// These three routes are the product's hot path. Through the router, a POST with a body and a JSON answer costs
/// ~43 µs of server CPU before any PushRelay code runs (measured with an endpoint that only reads the body and answers
/// a fixed 201; `GET /health` costs ~34 µs): request and body async sequences, the response writer and their task
/// hops. Here the body is collected by this handler and the request runs as one short task that writes its answer
/// back on the loop. The rules are the same code: `HomeAssistantRequest` reads the body, `HomeAssistantService`
/// decides, `HomeAssistantAnswer` renders the outcome.
///
/// Everything else passes through untouched to Hummingbird, which still serves these paths for other methods (the
/// JSON 405). The handler sits after Hummingbird's `HTTPConnectionStateHandler`, which therefore still sees every
/// request and response: graceful shutdown waits for an answer in flight here as for any other, and idle timeouts are
/// unchanged. Responses stay in request order: a request is only taken here when nothing forwarded to Hummingbird is
/// still unanswered, and parts that arrive while an answer is being prepared wait (and stop further reads) until it
/// is written.
final class HomeAssistantFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the handler needs from the application (one per server, shared by every connection).
    struct Endpoint: Sendable {
        let service: HomeAssistantService
        let maxBodyBytes: Int
        let metrics: PushRelayMetrics?
        let serverName: String?
        let dates = HTTPDateCache()

        /// The route and platform of a request this handler answers, if it is one. The query is cut on the UTF-8 view
        /// and the path matched by comparison: searching the `String` for "?" walked it by grapheme, and hashing it for
        /// a dictionary of three routes cost more than comparing (together ~1% of the notify path's CPU, measured).
        func route(_ head: HTTPRequest) -> (path: String, platform: HAPlatform)? {
            guard head.method == .post, var path = head.path else { return nil }
            if let q = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = String(path[..<q]) }
            let platform: HAPlatform
            switch path {
            case "/api/sendPush/android/v1": platform = .android
            case "/api/sendPushNotification", "/api/sendPush/iOS/v1": platform = .ios
            default: return nil
            }
            guard head.headerFields[.upgrade] == nil else { return nil }
            return (path, platform)
        }

        /// The answer to one notification: status, extra headers and the JSON body.
        func answer(_ body: ByteBuffer, platform: HAPlatform) async -> (HTTPResponse.Status, HTTPFields, [UInt8]) {
            do throws(APIError) {
                let n = try HomeAssistantRequest.notification(try HomeAssistantRequest.parse(body.readableBytesView))
                let answer = HomeAssistantAnswer(await service.send(n, platform: platform), token: n.pushToken)
                return (answer.status, answer.headers, answer.body)
            } catch {
                return (error.status, error.headers, JSONWriter.bytes(error.body))
            }
        }
    }

    private enum State {
        /// Between requests, or inside one forwarded to Hummingbird (`passing`).
        case idle
        case collecting(HTTPRequest, path: String, platform: HAPlatform, body: ByteBuffer)
        /// The body passed `http.max_body_bytes`: the rest is discarded and the answer is a 413.
        case discarding(HTTPRequest, path: String)
        /// The answer is being prepared; parts read meanwhile wait until it is written.
        case answering
    }

    private let endpoint: Endpoint
    private var state = State.idle
    /// Inside a request being forwarded to Hummingbird.
    private var passing = false
    /// Requests forwarded to Hummingbird whose response has not ended yet.
    private var forwarded = 0
    /// Parts read before the socket stopped being read, while an answer was being prepared.
    private var held: [HTTPRequestPart] = []
    /// A read was held back while answering: issued once the answer is written.
    private var readPending = false

    init(endpoint: Endpoint) {
        self.endpoint = endpoint
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .answering = state {
            held.append(part)
            return
        }
        receive(part, context: context)
    }

    /// Handles one part; returns whether it was passed on to Hummingbird.
    @discardableResult
    private func receive(_ part: HTTPRequestPart, context: ChannelHandlerContext) -> Bool {
        switch (state, part) {
        case (.idle, .head(let head)) where !passing:
            if forwarded == 0, let (path, platform) = endpoint.route(head) {
                state = .collecting(head, path: path, platform: platform, body: context.channel.allocator.buffer(capacity: 0))
            } else {
                passing = true
                forwarded += 1
                context.fireChannelRead(wrapInboundOut(part))
                return true
            }
        case (.idle, _):
            if case .end = part { passing = false }
            context.fireChannelRead(wrapInboundOut(part))
            return true
        case (.collecting(let head, let path, let platform, var body), .body(var chunk)):
            if body.readableBytes + chunk.readableBytes > endpoint.maxBodyBytes {
                state = .discarding(head, path: path)
            } else {
                state = .idle  // drop the state's reference, so the append does not copy the buffer
                body.writeBuffer(&chunk)
                state = .collecting(head, path: path, platform: platform, body: body)
            }
        case (.collecting(let head, let path, let platform, let body), .end):
            state = .answering
            answer(head, path: path, platform: platform, body: body, context: context)
        case (.discarding, .body):
            break
        case (.discarding(let head, let path), .end):
            state = .answering
            let error = APIError(.contentTooLarge, "PayloadTooLarge", "The request body is larger than this server accepts (http.max_body_bytes).")
            write(head, path: path, status: error.status, headers: error.headers, body: JSONWriter.bytes(error.body),
                  started: .now, context: context)
        case (.collecting, .head), (.discarding, .head), (.answering, _):
            // A head inside a request cannot come out of NIO's HTTP decoder; parts while answering are held.
            context.fireErrorCaught(HTTPChannelStateError.unexpectedPart)
        }
        return false
    }

    private func answer(_ head: HTTPRequest, path: String, platform: HAPlatform, body: ByteBuffer, context: ChannelHandlerContext) {
        let started = ContinuousClock.now
        let endpoint = self.endpoint
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        // Started on the loop, with NIO as the concurrency executor: the task runs here, and the store resumes it here.
        Task {
            let (status, headers, bytes) = await endpoint.answer(body, platform: platform)
            let finish: @Sendable () -> Void = {
                bound.value.handler.write(head, path: path, status: status, headers: headers, body: bytes, started: started, context: bound.value.context)
            }
            if loop.inEventLoop { finish() } else { loop.execute(finish) }
        }
    }

    private func write(_ head: HTTPRequest, path: String, status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8],
                       started: ContinuousClock.Instant, context: ChannelHandlerContext) {
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.count)
        fields[.date] = endpoint.dates.current()
        if let server = endpoint.serverName { fields[.server] = server }
        let close = head.headerFields[.connection] == "close" || status == .contentTooLarge
        if close { fields[.connection] = "close" }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        endpoint.metrics?.record(route: path, method: head.method.rawValue, status: status.code, duration: .now - started)
        state = .idle
        if close {
            context.close(promise: nil)
            return
        }
        // Parts that arrived meanwhile (a pipelined request), then reading resumes. Hummingbird's side takes what was
        // passed on at the next read-complete, so one is sent for them.
        var passedOn = false
        while !held.isEmpty && !isAnswering {
            passedOn = receive(held.removeFirst(), context: context) || passedOn
        }
        if passedOn { context.fireChannelReadComplete() }
        if readPending, !isAnswering {
            readPending = false
            context.read()
        }
    }

    private var isAnswering: Bool {
        if case .answering = state { return true }
        return false
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { forwarded -= 1 }
        context.write(data, promise: promise)
    }

    /// Reading pauses only once a pipelined request is waiting behind an answer (Home Assistant sends one request at
    /// a time, so the usual answer costs no change of the socket's read interest).
    func read(context: ChannelHandlerContext) {
        if isAnswering && !held.isEmpty {
            readPending = true
        } else {
            context.read()
        }
    }
}

enum HTTPChannelStateError: Error {
    case unexpectedPart
}

/// The `Date` header value, formatted once per second.
final class HTTPDateCache: Sendable {
    private let cache = Mutex<(second: Int, value: String)>((-1, ""))

    func current() -> String {
        var t = time(nil)
        let second = Int(t)
        return cache.withLock { c in
            if c.second != second {
                var parts = tm()
                gmtime_r(&t, &parts)
                let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
                let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
                func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
                c.value = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                    + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
                c.second = second
            }
            return c.value
        }
    }
}
