import Foundation
import Logging
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Synchronization
import Testing

@testable import PushRelayServer

/// The websocket transport itself: keepalive, upgrades, shutdown.
@Suite struct PushChannelTransportTests {
    /// The keepalive's interval: no other timer of the server has it.
    static let pingInterval = Duration.milliseconds(1_500)

    @Test func aPeerThatStopsAnsweringPingsIsClosed() async throws {
        let clock = ManualClock()
        try await TestServer.with(
            clock: clock,
            configure: PushChannelRig.cloud(10_000) {
                $0.channel.pingIntervalMs = 1_500
                $0.channel.authTimeoutMs = 60_000
            }
        ) { (s: TestServer) async throws in
            let isKeepalive: @Sendable (Duration) -> Bool = { $0 == Self.pingInterval }
            async let watched = RawWebSocket.watch(port: s.port, limit: 20)
            _ = await clock.nextScheduled(where: isKeepalive)
            // The first round pings; the next one finds it unanswered and closes the socket.
            clock.advance(by: Self.pingInterval)
            _ = await clock.nextScheduled(where: isKeepalive)
            clock.advance(by: Self.pingInterval)
            let capture = await watched
            #expect(capture.handshake.hasPrefix("HTTP/1.1 101"), "\(capture.handshake)")
            // auth_required (text), one ping that goes unanswered, then the close.
            #expect(capture.opcodes.contains(0x1))
            #expect(capture.opcodes.filter { $0 == 0x9 }.count == 1, "\(capture.opcodes)")
            #expect(capture.closedAfter != nil, "the server kept a silent peer open")
        }
    }

    @Test func answeredPingsKeepTheChannelOpen() async throws {
        let clock = ManualClock()
        try await TestServer.with(clock: clock, configure: PushChannelRig.cloud(10_000) { $0.channel.pingIntervalMs = 1_500 }) {
            (s: TestServer) async throws in
            let isKeepalive: @Sendable (Duration) -> Bool = { $0 == Self.pingInterval }
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            _ = await clock.nextScheduled(where: isKeepalive)
            for round in 1...3 {
                // The server pings; once its next round is armed, the ping is out. The peer answers with a pong that
                // carries the ping's payload (the test client answers pings as phones do, before it reads what came
                // after the ping). A command sent once a reply has been read goes after that pong, so its reply shows
                // the server has the pong before the next round comes.
                clock.advance(by: Self.pingInterval)
                _ = await clock.nextScheduled(where: isKeepalive)
                for id in [Int64(10 + 2 * round), Int64(11 + 2 * round)] {
                    ws.send(["id": .int(id), "type": "ping"])
                    #expect(try await ws.receive() == ["id": .int(id), "type": "pong"])
                }
            }
            #expect(!ws.isClosed, "open after three rounds")
            let r = try await s.android(PushChannelRig.body("still here"))
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true)
            #expect(try await ws.receive()["event"]?["message"] == "still here")
        }
    }

    @Test func aFragmentedMessageOverTheLimitClosesWithAReason() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud(10_000) { $0.channel.maxFrameBytes = 1024 }) { (s: TestServer) async throws in
            let part = [UInt8](repeating: UInt8(ascii: "x"), count: 800)
            let capture = await RawWebSocket.watch(
                port: s.port,
                send: [
                    RawWebSocket.frame(opcode: 0x1, fin: false, part),
                    RawWebSocket.frame(opcode: 0x0, fin: false, part),
                ],
                limit: 10
            )
            #expect(capture.opcodes.last == 0x8, "a close frame: \(capture.opcodes)")
            // 1009 (0x03F1), then the reason.
            let tail = String(decoding: capture.bytes.suffix(40), as: UTF8.self)
            #expect(tail.contains("message too big"), "\(tail)")
            #expect(capture.bytes.suffix(17).prefix(2) == [0x03, 0xF1])
            #expect(capture.closedAfter != nil)
        }
    }

    @Test func aBurstOfCommandsIsAnsweredInOrderWithNoneLost() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            // Far more than the backlog at which the server stops reading the socket for a while.
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            for id in 2...801 { ws.send(["id": .int(Int64(id)), "type": "ping"]) }
            for id in 2...801 {
                let pong = try await ws.receive()
                #expect(pong == ["id": .int(Int64(id)), "type": "pong"])
                if pong["id"] != .int(Int64(id)) { break }
            }
        }
    }

    @Test func textThatIsNotUTF8ClosesWith1007() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            let capture = await RawWebSocket.watch(
                port: s.port,
                send: [RawWebSocket.frame(opcode: 0x1, fin: true, [0x7B, 0xFF, 0xFE, 0x7D])],
                limit: 10
            )
            #expect(capture.opcodes.last == 0x8, "a close frame: \(capture.opcodes)")
            let tail = String(decoding: capture.bytes.suffix(40), as: UTF8.self)
            #expect(tail.contains("not valid UTF-8"), "\(tail)")
            let reason = Array("text frame is not valid UTF-8".utf8)
            #expect(Array(capture.bytes.suffix(reason.count + 2).prefix(2)) == [0x03, 0xEF])  // 1007
        }
    }

    @Test func aPlainGETOfTheChannelPathIsAJSONError() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            let r = try await s.request(.GET, "/api/websocket")
            #expect(r.status == 426)
            #expect(r["errorType"] == "UpgradeRequired")
            #expect(r["message"]?.stringValue?.isEmpty == false)
            #expect(r.headers["content-type"] == "application/json")
        }
    }

    @Test func aWebsocketUpgradeElsewhereIsRefusedWithJSON() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            let capture = await RawWebSocket.watch(port: s.port, path: "/api/elsewhere", limit: 10)
            #expect(capture.handshake.hasPrefix("HTTP/1.1 404"), "\(capture.handshake)")
            #expect(String(decoding: capture.bytes, as: UTF8.self).contains(#""errorType":"NotFound""#))
            #expect(capture.closedAfter != nil)
        }
    }

    @Test func anIncompleteHandshakeIsA400() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            let r = try await s.request(.GET, "/api/websocket", headers: [("Upgrade", "websocket"), ("Connection", "Upgrade")])
            #expect(r.status == 400)
            #expect(r["message"]?.stringValue?.contains("Sec-WebSocket-Key") == true, "\(r.rawBody)")
        }
    }

    @Test func anUpgradeAfterAPlainRequestIsRedirectedToANewConnection() async throws {
        try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            // NIO negotiates upgrades on a connection's first request only.
            let capture = await RawWebSocket.watch(port: s.port, before: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", limit: 10)
            let text = String(decoding: capture.bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
            #expect(text.contains("HTTP/1.1 307"), "\(text)")
            #expect(text.lowercased().contains("location: /api/websocket"), "\(text)")
            #expect(capture.closedAfter != nil)
        }
    }

    /// A channel closed by shutdown settles its unconfirmed message before the providers and the storage stop: it
    /// goes by the cloud route once, its row is gone, and nothing fails on the way (so the next start's recovery has
    /// nothing to send again).
    @Test func shutdownSettlesUnconfirmedMessagesBeforeTheStorageCloses() async throws {
        let cloud = ScriptedProvider(name: "cloud", [.deliver])
        let path = TestServer.tempPath()
        let logs = try await TestServer.with(dbPath: path, providers: ["cloud": cloud], configure: PushChannelRig.cloud()) {
            (s: TestServer) async throws in
            try await s.bind(PushChannelRig.token)
            let ws = try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
            let r = try await s.android(PushChannelRig.body("in flight at shutdown"))
            #expect(r["messageId"]?.stringValue?.hasPrefix("local:") == true)
            _ = try await ws.receive()
            return s.logs
        }
        #expect(cloud.callCount == 1, "the unconfirmed message falls back once, during shutdown")
        #expect(!logs.lines.contains { $0.text.contains("could not update a channel message") }, "\(logs.lines.map(\.text))")
        let reopened = try PushRelayDatabase(path: path)
        #expect(try await SQLitePushChannelStore(database: reopened).all().isEmpty, "nothing is left for the next start to send again")
    }

    @Test func shutdownClosesEveryChannel() async throws {
        let ws = try await TestServer.with(configure: PushChannelRig.cloud()) { (s: TestServer) async throws in
            try await WSTestClient.subscribed(port: s.port, token: PushChannelRig.token)
        }
        #expect(await ws.waitUntilClosed(timeout: .seconds(10)))
    }
}
