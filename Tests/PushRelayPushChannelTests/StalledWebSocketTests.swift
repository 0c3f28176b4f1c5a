import Foundation
import PushRelayCore
import PushRelayPushChannel
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

#if canImport(Glibc)
import Glibc
#endif

/// A device that subscribes and then never reads its socket: it cannot hold the server's memory or the connection.
///
/// Wall clock: each test first fills a real socket's kernel buffers, megabytes on two cores, which no time port steps.
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

    /// 500 client ping frames of 125 bytes each.
    static let pings = Array((0..<500).map { _ in RawWebSocket.frame(opcode: 0x9, fin: true, [UInt8](repeating: 0x70, count: 125)) }.joined())

    @Test func aClientThatFloodsPingsWithoutReadingIsNotReadAndTheAuthTimeoutClosesIt() async throws {
        let clock = ManualClock()
        let authTimeout = Duration.milliseconds(5_000)
        try await TestServer.with(
            clock: clock,
            configure: { c in
                c.channel.authTimeoutMs = 5_000
                c.channel.pingIntervalMs = 600_000
            }
        ) { (s: TestServer) async throws in
            let fd = try #require(LoopbackSocket.connect(port: s.port, receiveTimeoutMicroseconds: 100_000, receiveBuffer: 2048))
            defer { close(fd) }
            let upgrade =
                "GET /api/websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            _ = Array(upgrade.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The greeting comes once the authentication timer runs; from here on the client reads nothing.
            #expect(try await onThread { FloodingSocket.read(fd, until: "auth_required", limit: .seconds(20)) })
            // 125-byte pings, each asking for a pong the client never reads: the server stops reading instead of
            // holding them.
            let stalled = try await onThread { FloodingSocket.sendUntilStalled(fd, chunk: Self.pings, limit: 64 << 20) }
            #expect(stalled, "the server kept reading pings it could not answer")
            // The authentication timeout queues auth_invalid and a close frame that can never be written; the socket
            // closes after the grace anyway.
            clock.advance(by: authTimeout)
            clock.advance(by: SocketClosing.timeout)
            #expect(try await onThread { FloodingSocket.waitUntilClosed(fd, limit: .seconds(20)) }, "the connection outlived its timeout")
        }
    }
}
