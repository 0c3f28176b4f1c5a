import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Home Assistant's notify POSTs are answered in the connection's NIO pipeline (`NotifyFastPath`), everything
/// else by Hummingbird's router. These tests speak raw HTTP/1.1 over one socket, to check what an HTTP client library
/// would hide: answers in request order on a keep-alive connection (pipelined too), `Connection: close`, the 413,
/// and graceful shutdown waiting for a notification in flight.
@Suite struct NotifyFastPathTests {
    static func post(_ path: String, _ body: String, close: Bool = false) -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + (close ? "Connection: close\r\n" : "") + "\r\n" + body
    }

    static func get(_ path: String, close: Bool = false) -> String {
        "GET \(path) HTTP/1.1\r\nHost: x\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n"
    }

    static func notification(_ token: String) -> String {
        String(decoding: JSONWriter.bytes(TestServer.haBody(token: token)), as: UTF8.self)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderAcrossBothPaths() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let a = "fast-path-a-" + String(repeating: "a", count: 30)
            let b = "fast-path-b-" + String(repeating: "b", count: 30)
            // One write: notify, router, notify, router (the last closes the connection).
            let exchange = await RawHTTP.exchange(
                port: s.port,
                Self.post("/api/sendPush/android/v1", Self.notification(a))
                    + Self.get("/health")
                    + Self.post("/api/sendPush/android/v1", Self.notification(b))
                    + Self.post("/api/checkRateLimits", #"{"push_token":"\#(a)"}"#, close: true)
            )
            let replies = exchange.responses
            #expect(replies.map(\.status) == [201, 200, 201, 200], "\(exchange)")
            guard replies.count == 4 else { return }
            #expect(replies[0].json["target"] == .string(a))
            // Keys in sorted order, as every other JSON answer writes them.
            #expect(
                replies[0].body.contains(#""rateLimits":{"attempts":1,"errors":0,"maximum":500,"remaining":499,"resetsAt":""#),
                "\(replies[0].body)"
            )
            #expect(replies[0].body.contains(#"Z","successful":1,"total":1},"sentPayload":{"#), "\(replies[0].body)")
            #expect(replies[1].json["status"] == "ok")
            #expect(replies[2].json["target"] == .string(b))
            #expect(replies[3].json["target"] == .string(a))
            #expect(replies[3].json["rateLimits"]?["successful"] == .int(1))
            #expect(exchange.closed, "Connection: close ends the connection: \(exchange)")

            // The router first, then a notification behind it.
            let second = await RawHTTP.exchange(
                port: s.port,
                Self.get("/health") + Self.post("/api/sendPush/android/v1", Self.notification(b), close: true)
            )
            #expect(second.responses.map(\.status) == [200, 201], "\(second)")
            #expect(second.responses.last?.json["rateLimits"]?["successful"] == .int(2))
        }
    }

    @Test func aNotificationWithConnectionCloseIsAnsweredThenTheConnectionCloses() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(
                port: s.port,
                Self.post("/api/sendPushNotification", Self.notification("close-token-0123456789"), close: true)
            )
            let reply = try #require(exchange.responses.first, "\(exchange)")
            #expect(reply.status == 201)
            #expect(reply.headers["connection"] == "close")
            #expect(reply.headers["content-type"] == "application/json")
            #expect(reply.headers["server"] == "PushRelay")
            #expect(reply.headers["date"]?.hasSuffix(" GMT") == true, "\(reply.headers)")
            #expect(exchange.closed, "\(exchange)")
        }
    }

    @Test func keepAliveServesManyNotificationsOnOneConnection() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let requests =
                (0..<20).map { Self.post("/api/sendPush/android/v1", Self.notification("keepalive-\($0)-0123456789")) }.joined()
                + Self.get("/health", close: true)
            let exchange = await RawHTTP.exchange(port: s.port, requests)
            #expect(exchange.responses.map(\.status) == Array(repeating: 201, count: 20) + [200], "\(exchange)")
            #expect(
                exchange.responses.prefix(20).map { $0.json["target"]?.stringValue ?? "" }
                    == (0..<20).map { "keepalive-\($0)-0123456789" }
            )
        }
    }

    @Test func anOversizedNotificationIs413AndClosesTheConnection() async throws {
        try await TestServer.with(configure: { $0.http.maxBodyBytes = 512 }) { (s: TestServer) async throws in
            let big = String(
                decoding: JSONWriter.bytes(TestServer.haBody(token: "big-token-0123456789", message: String(repeating: "x", count: 2000))),
                as: UTF8.self
            )
            let exchange = await RawHTTP.exchange(port: s.port, Self.post("/api/sendPush/android/v1", big) + Self.get("/health"))
            let reply = try #require(exchange.responses.first, "\(exchange)")
            #expect(reply.status == 413)
            #expect(reply.json["errorType"] == "PayloadTooLarge")
            #expect(reply.json["message"]?.stringValue?.isEmpty == false)
            #expect(exchange.responses.count == 1 && exchange.closed, "the rest of the connection is not read: \(exchange)")
            let limits = try await s.post("/api/checkRateLimits", ["push_token": "big-token-0123456789"])
            #expect(limits.int("rateLimits", "attempts") == 0, "a refused body counts nothing")
        }
    }

    @Test func aQueryStringIsIgnoredAndOtherPathsAreLeftToTheRouter() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(
                port: s.port,
                Self.post("/api/sendPush/android/v1?source=ha&name=%C3%A9", Self.notification("query-android-0123456789"))
                    + Self.post("/api/sendPush/iOS/v1?x", Self.notification("query-ios-0123456789"))
                    + Self.post("/api/sendPushNotification?", Self.notification("query-legacy-0123456789"))
                    + Self.post("/api/sendPush/android/v2", Self.notification("query-other-0123456789"))
                    // Not a path of the fast path: the router serves it, as it serves a trailing slash anywhere.
                    + Self.post("/api/sendPush/android/v1/", Self.notification("query-slash-0123456789"), close: true)
            )
            #expect(exchange.responses.map(\.status) == [201, 201, 201, 404, 201], "\(exchange)")
            guard exchange.responses.count == 5 else { return }
            #expect(exchange.responses[0].json["sentPayload"]?["android"] != nil, "the Android translation")
            #expect(exchange.responses[1].json["sentPayload"]?["apns"] != nil, "the iOS translation")
            #expect(exchange.responses[2].json["sentPayload"]?["apns"] != nil, "the iOS translation")
            #expect(exchange.responses[3].json["message"]?.stringValue?.isEmpty == false)
            #expect(exchange.responses[4].json["sentPayload"]?["android"] != nil, "the Android translation")
        }
    }

    @Test func otherMethodsOnTheNotifyPathsStillGetTheRoutersJSON405() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(port: s.port, Self.get("/api/sendPush/android/v1", close: true))
            let reply = try #require(exchange.responses.first, "\(exchange)")
            #expect(reply.status == 405)
            #expect(reply.headers["allow"] == "POST")
            #expect(reply.json["message"]?.stringValue?.isEmpty == false)
        }
    }

    @Test func gracefulShutdownWaitsForANotificationInFlight() async throws {
        let slow = ScriptedProvider(name: "slow", [.delay(milliseconds: 600, then: nil)])
        let reply = try await TestServer.with(providers: ["slow": slow], configure: { $0.apps = [.init(match: "*", provider: "slow")] }) {
            (s: TestServer) async throws -> Task<RawHTTP.Exchange, Never> in
            let port = s.port
            let request = Task {
                await RawHTTP.exchange(port: port, Self.post("/api/sendPush/android/v1", Self.notification("inflight-token-0123456789")))
            }
            // Shut down while the provider call is under way.
            try await eventually("the provider call starts") { slow.callCount > 0 }
            return request
        }
        let exchange = await reply.value
        #expect(exchange.responses.map(\.status) == [201], "\(exchange)")
        #expect(exchange.closed, "the connection closes after the answer, as the server stops: \(exchange)")
        #expect(slow.finishedCount == 1)
    }
}
