import Foundation
import PushRelayCore
import PushRelayServerTestRig
import Testing

/// Every answer's head is completed by `ResponseHead`, wherever it is written. The answers written below the router (a
/// request that is not HTTP, headers past the decoder's limit, a refused websocket upgrade, a websocket upgrade late on
/// a keep-alive connection) carry the fields of the router's own JSON error that closes its connection, in the same
/// order (but for the request id the router's middleware adds): `Content-Type`, `Content-Length`, `Date`, `Server`,
/// `Connection: close`. (The slow client's 408 is checked in `SlowClientTests` and `SlowClientGuardTests`.)
@Suite struct AnswerHeadsTests {
    typealias Fast = NotifyFastPathTests

    static func upgrade(_ path: String, key: Bool = true) -> String {
        "GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + (key ? "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" : "") + "Sec-WebSocket-Version: 13\r\n\r\n"
    }

    /// The common fields' values: the server's name, an IMF-fixdate on the server's clock, the body's length.
    static func expectCommonFields(_ reply: RawHTTP.Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.headers["server"] == "PushRelay", sourceLocation: sourceLocation)
        #expect(reply.headers["date"]?.hasSuffix(" 2026 12:00:00 GMT") == true, "\(reply.headers)", sourceLocation: sourceLocation)
        #expect(reply.headers["connection"] == "close", sourceLocation: sourceLocation)
        #expect(reply.headers["content-length"] == "\(reply.body.utf8.count)", sourceLocation: sourceLocation)
    }

    @Test func answersBelowTheRouterHaveTheHeadOfTheRoutersClosingError() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let routers = try #require(await RawHTTP.exchange(port: s.port, Fast.get("/nowhere", close: true)).responses.first)
            #expect(routers.status == 404)
            Self.expectCommonFields(routers)
            let jsonError = routers.names.filter { $0 != "x-request-id" }
            #expect(jsonError == ["content-type", "content-length", "date", "server", "connection"], "\(routers.names)")

            let below: [(name: String, request: String, status: Int)] = [
                ("not HTTP", "GARBAGE\r\n\r\n", 400),
                (
                    "headers past the decoder's limit",
                    "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 81 * 1024) + "\r\n\r\n", 431
                ),
                ("a websocket upgrade elsewhere", Self.upgrade("/api/elsewhere"), 404),
                ("a websocket upgrade without its key", Self.upgrade("/api/websocket", key: false), 400),
            ]
            for answer in below {
                let exchange = await RawHTTP.exchange(port: s.port, answer.request)
                let reply = try #require(exchange.responses.first, "\(answer.name): \(exchange)")
                #expect(reply.status == answer.status, "\(answer.name)")
                #expect(reply.names == jsonError, "\(answer.name): \(reply.names)")
                Self.expectCommonFields(reply)
                #expect(reply.json["message"]?.stringValue?.isEmpty == false, "\(answer.name)")
                #expect(exchange.closed, "\(answer.name): \(exchange)")
            }
        }
    }

    @Test func aLateWebsocketUpgradeIsRedirectedWithTheCommonFields() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(port: s.port, Fast.get("/health") + Self.upgrade("/api/websocket?v=2"))
            #expect(exchange.responses.map(\.status) == [200, 307], "\(exchange)")
            let redirect = try #require(exchange.responses.last)
            #expect(redirect.headers["location"] == "/api/websocket?v=2")
            #expect(redirect.names == ["location", "content-length", "date", "server", "connection"], "\(redirect.names)")
            Self.expectCommonFields(redirect)
            #expect(exchange.closed, "\(exchange)")
        }
    }
}
