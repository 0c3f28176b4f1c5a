import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PushRelayCore
import Synchronization
import Testing

@testable import PushRelayServer

/// The fast path's handler in an `EmbeddedChannel`: what it answers itself, what it passes on, and when it closes.
@Suite struct HomeAssistantFastPathHandlerTests {
    /// The bodies the endpoint was asked to answer.
    final class Seen: Sendable {
        private let bodies = Mutex<[String]>([])
        func append(_ s: String) { bodies.withLock { $0.append(s) } }
        var all: [String] { bodies.withLock { $0 } }
    }

    static func endpoint(maxBodyBytes: Int = 1024, seen: Seen = Seen()) -> HomeAssistantFastPath.Endpoint {
        HomeAssistantFastPath.Endpoint(maxBodyBytes: maxBodyBytes, metrics: nil, serverName: "PushRelay") { body, platform in
            seen.append("\(platform.rawValue):\(String(buffer: body))")
            return (.created, [:], Array(#"{"messageId":"m"}"#.utf8))
        }
    }

    static func channel(_ endpoint: HomeAssistantFastPath.Endpoint) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HomeAssistantFastPath(endpoint: endpoint))
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        channel.embeddedEventLoop.run()
        #expect(channel.isActive)
        return channel
    }

    static func post(_ path: String, headers: HTTPFields = [:]) -> HTTPRequestPart {
        .head(HTTPRequest(method: .post, scheme: nil, authority: nil, path: path, headerFields: headers))
    }

    /// The response parts written so far, running the loop until `count` arrived (the answer is prepared by a task).
    static func responses(_ channel: EmbeddedChannel, count: Int) async throws -> [HTTPResponsePart] {
        var out: [HTTPResponsePart] = []
        let deadline = Date().addingTimeInterval(5)
        while out.count < count, Date() < deadline {
            channel.embeddedEventLoop.run()
            while let part = try channel.readOutbound(as: HTTPResponsePart.self) { out.append(part) }
            if out.count < count { try await Task.sleep(for: .milliseconds(2)) }
        }
        return out
    }

    @Test func aNotifyPostIsAnsweredByTheEndpointWithTheJSONHeaders() async throws {
        let seen = Seen()
        let channel = try Self.channel(Self.endpoint(seen: seen))
        try channel.writeInbound(Self.post("/api/sendPush/android/v1?x=1"))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{\"message\":")))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "\"hi\"}")))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil, "nothing reaches Hummingbird")
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .created)
        #expect(head.headerFields[.contentType] == "application/json")
        #expect(head.headerFields[.contentLength] == "17")
        #expect(head.headerFields[.server] == "PushRelay")
        #expect(head.headerFields[.date] != nil)
        #expect(head.headerFields[.connection] == nil)
        #expect(seen.all == [#"android:{"message":"hi"}"#])
        #expect(channel.isActive)
    }

    @Test func otherRequestsArePassedOnUntouched() throws {
        let channel = try Self.channel(Self.endpoint())
        let get = HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/sendPush/android/v1"))
        try channel.writeInbound(get)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == get)
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .end(nil))
        let upgrade = Self.post("/api/sendPushNotification", headers: [HTTPField.Name.upgrade: "h2c"])
        // Hummingbird answers the GET first; then the upgrade offer is passed on as well.
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        try channel.writeInbound(upgrade)
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == upgrade)
    }

    @Test func anOversizedBodyIs413AndTheConnectionCloses() async throws {
        let seen = Seen()
        let channel = try Self.channel(Self.endpoint(maxBodyBytes: 8, seen: seen))
        try channel.writeInbound(Self.post("/api/sendPush/iOS/v1"))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: String(repeating: "x", count: 20))))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .contentTooLarge)
        #expect(head.headerFields[.connection] == "close")
        #expect(seen.all.isEmpty)
        #expect(!channel.isActive)
    }

    @Test func connectionCloseIsHonouredAfterTheAnswer() async throws {
        let channel = try Self.channel(Self.endpoint())
        try channel.writeInbound(Self.post("/api/sendPushNotification", headers: [HTTPField.Name.connection: "close"]))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{}")))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .created)
        #expect(head.headerFields[.connection] == "close")
        #expect(!channel.isActive)
    }
}
