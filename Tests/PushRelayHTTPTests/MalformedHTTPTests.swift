import Foundation
import PushRelayCore
import PushRelayServerTestRig
import Testing

/// Bytes that are not HTTP/1.1 get a JSON error and a closed connection, on the first request of a connection as on a
/// later one, on the notify paths as on the router's; requests before the bad bytes are still answered, in order.
///
/// AddressSanitizer: bytes that are not HTTP/1.1, read by the request decoder.
@Suite struct MalformedHTTPTests {
    typealias Fast = NotifyFastPathTests

    static func expectJSONError(_ reply: RawHTTP.Response?, status: Int, errorType: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply?.status == status, sourceLocation: sourceLocation)
        #expect(reply?.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
        #expect(reply?.headers["connection"] == "close", sourceLocation: sourceLocation)
        // Every answer's head (`ResponseHead`), as the router's.
        #expect(reply?.headers["server"] == "PushRelay", sourceLocation: sourceLocation)
        #expect(reply?.headers["date"]?.hasSuffix(" GMT") == true, "\(reply?.headers ?? [:])", sourceLocation: sourceLocation)
        #expect(reply.map { $0.headers["content-length"] == "\($0.body.utf8.count)" } == true, sourceLocation: sourceLocation)
        #expect(reply?.json["errorType"] == .string(errorType), sourceLocation: sourceLocation)
        #expect(reply?.json["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    /// The exchange got one answer, that JSON error, and the connection closed.
    static func expectOnlyAnswer(_ exchange: RawHTTP.Exchange, status: Int, errorType: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(exchange.responses.count == 1, "\(exchange)", sourceLocation: sourceLocation)
        expectJSONError(exchange.responses.first, status: status, errorType: errorType, sourceLocation: sourceLocation)
        #expect(exchange.closed, "\(exchange)", sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n",
        "GET /health HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
        "GET /health?name=é HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /api/sendPush/android/v1 HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n{}",
        "GET /he\u{01}alth HTTP/1.1\r\nHost: x\r\n\r\n",
    ])
    func aFirstRequestThatIsNotHTTPIsAnsweredInJSONAndTheConnectionCloses(_ request: String) async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(port: s.port, request)
            Self.expectOnlyAnswer(exchange, status: 400, errorType: "InvalidRequest")
        }
    }

    @Test func requestsBeforeTheBadBytesAreAnsweredFirst() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let token = "malformed-after-0123456789"
            let exchange = await RawHTTP.exchange(
                port: s.port,
                Fast.get("/health")
                    + Fast.post("/api/sendPush/android/v1", Fast.notification(token)) + "GARBAGE\r\n\r\n"
            )
            #expect(exchange.responses.map(\.status) == [200, 201, 400], "\(exchange)")
            Self.expectJSONError(exchange.responses.last, status: 400, errorType: "InvalidRequest")
            #expect(exchange.closed, "\(exchange)")
            let limits = try await s.post("/api/checkRateLimits", ["push_token": .string(token)])
            #expect(limits.int("rateLimits", "successful") == 1)
        }
    }

    @Test func aNotificationWithABrokenChunkedBodyIsRefusedAndCountsNothing() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let token = "malformed-chunked-0123456789"
            let body = Fast.notification(token)
            let request =
                "POST /api/sendPush/android/v1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\nZZ\r\n"
            let exchange = await RawHTTP.exchange(port: s.port, request)
            Self.expectOnlyAnswer(exchange, status: 400, errorType: "InvalidRequest")
            let limits = try await s.post("/api/checkRateLimits", ["push_token": .string(token)])
            #expect(limits.int("rateLimits", "attempts") == 0)
        }
    }

    @Test func headersPastTheDecodersLimitAre431() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(
                port: s.port,
                "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: "
                    + String(repeating: "a", count: 81 * 1024) + "\r\n\r\n"
            )
            Self.expectOnlyAnswer(exchange, status: 431, errorType: "HeadersTooLarge")
        }
    }

    @Test func aFrameSentRightBehindTheUpgradeRequestReachesTheChannel() async throws {
        // The frame reaches the pipeline as raw bytes when the upgrade takes the HTTP decoder out; the handler after
        // the decoder must let it through (it used to stop the server: a fatal error decoding it as an HTTP part).
        try await TestServer.with { (s: TestServer) async throws in
            let auth = RawWebSocket.frame(opcode: 0x1, fin: true, Array(#"{"type":"auth","access_token":"not-a-token"}"#.utf8))
            let capture = await RawWebSocket.watch(port: s.port, send: [auth], early: true, limit: 30)
            #expect(capture.handshake.hasPrefix("HTTP/1.1 101 "), "\(capture.handshake)")
            let text = String(decoding: capture.bytes, as: UTF8.self)
            #expect(text.contains("auth_required") && text.contains("auth_invalid"), "the channel read the early frame: \(text)")
            #expect(capture.closedAfter != nil, "a failed authentication closes the channel")
            #expect(try await s.request(.GET, "/health").status == 200, "the server still serves")
        }
    }

    @Test func anUpgradeOfferForAnotherProtocolIsAnsweredAsPlainHTTP() async throws {
        // What `curl --http2 http://…` sends. It used to be closed with no answer.
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(
                port: s.port,
                "GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                    + "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n"
            )
            #expect(exchange.responses.map(\.status) == [200], "\(exchange)")
            #expect(exchange.responses.first?.json["status"] == "ok")
            #expect(exchange.closed, "nothing after an upgrade request is parsed, so the connection closes: \(exchange)")
        }
    }

    @Test func aWebsocketUpgradeWithoutConnectionUpgradeIsRefusedWithARequestBehindIt() async throws {
        // NIO's decoder does not take this for an upgrade and parses the request behind it; had the upgrade gone
        // ahead, that request would have been replayed into the websocket pipeline (a crash of the server).
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(
                port: s.port,
                "GET /api/websocket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    + "Connection: keep-alive\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                    + Fast.get("/health", close: true)
            )
            let reply = try #require(exchange.responses.first, "\(exchange)")
            #expect(reply.status == 400)
            #expect(reply.json["message"]?.stringValue?.contains("Connection: Upgrade") == true, "\(reply.body)")
            #expect(exchange.closed, "\(exchange)")
            #expect(try await s.request(.GET, "/health").status == 200, "the server still serves")
        }
    }

    @Test func theWebsocketUpgradeStillWorks() async throws {
        // The handler passes the upgrade through and leaves the pipeline with it: the channel speaks first.
        try await TestServer.with { (s: TestServer) async throws in
            // Read until the channel has spoken (up to 30 s: the whole suite starts at once, and a busy machine is slow).
            let capture = await RawWebSocket.watch(port: s.port, limit: 30) { String(decoding: $0.bytes, as: UTF8.self).contains("auth_required") }
            #expect(capture.handshake.hasPrefix("HTTP/1.1 101 "), "\(capture.handshake)")
            #expect(String(decoding: capture.bytes, as: UTF8.self).contains("auth_required"), "\(capture.handshake)")
        }
    }
}
