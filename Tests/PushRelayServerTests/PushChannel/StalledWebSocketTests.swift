import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A device that subscribes and then never reads its socket: it cannot hold the server's memory or the connection.
@Suite struct StalledWebSocketTests {
    @Test func aSubscriberThatNeverReadsIsDisconnectedAndItsNotificationsGoByTheCloud() async throws {
        try await TestServer.with(configure: { c in
            c.channel.outboundBuffer = 8
            c.quota.dailyLimit = 100_000
            c.metricsEnabled = true
        }) { (s: TestServer) async throws in
            let token = "stalled:" + String(repeating: "s", count: 24)
            let fd = try #require(LoopbackSocket.connect(port: s.port, receiveTimeoutMicroseconds: 100_000, receiveBuffer: 2048))
            defer { close(fd) }
            let upgrade =
                "GET /api/websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            let frames = [
                JSONWriter.bytes(["type": "auth", "access_token": .string(token)]),
                JSONWriter.bytes(["id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": "hook-1", "support_confirm": false]),
            ].map { RawWebSocket.frame(opcode: 0x1, fin: true, $0) }
            let bytes = Array(upgrade.utf8) + frames.flatMap { $0 }
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // From here on the client reads nothing.
            try await eventually("the channel is subscribed") {
                try await s.request(.GET, "/metrics").rawBody.contains("pushrelay_channel_subscriptions 1")
            }
            let big = String(repeating: "x", count: 3000)
            var answered = 0
            var routes: [String: Int] = [:]
            for i in 0..<3000 {
                let r = try await s.android(TestServer.haBody(token: token, message: "\(i) \(big)"))
                #expect(r.status == 201, "\(r.rawBody)")
                routes[String(r["messageId"]?.stringValue?.prefix(6) ?? "?"), default: 0] += 1
                answered += 1
                if i % 50 == 49, try await s.request(.GET, "/metrics").rawBody.contains("pushrelay_channel_connections 0") { break }
            }
            try await eventually("the stalled connection is closed by the server", seconds: 15) {
                try await s.request(.GET, "/metrics").rawBody.contains("pushrelay_channel_connections 0")
            }
            #expect(answered < 3000, "the server gave up on the socket before the client had to stop sending: \(routes)")
            // What comes next goes by the cloud route, answered at once.
            let after = try await s.android(TestServer.haBody(token: token, message: "after"))
            #expect(after.status == 201)
        }
    }
}
