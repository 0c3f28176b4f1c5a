import NIOCore
import NIOEmbedded
import NIOHTTP1
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// HTTP/1.0 without keep-alive, `Connection: close` and CONNECT end their connection once answered; everything else
/// keeps it, until the server stops: then every request is marked so, and an idle connection closes after a short
/// linger. The answers are left as their writers made them (`ResponseHead` says `Connection: close`).
///
/// Wall clock: a stop under a provider call that takes 300 ms of real time, and raw sockets read until the server closes them.
struct ConnectionCloseRuleTests {
    static func head(_ version: HTTPVersion, _ method: HTTPMethod = .GET, connection: String? = nil) -> HTTPRequestHead {
        var headers = HTTPHeaders([("host", "x")])
        if let connection { headers.add(name: "connection", value: connection) }
        return HTTPRequestHead(version: version, method: method, uri: "/health", headers: headers)
    }

    @Test func theRule() {
        #expect(ConnectionCloseRule.closesAfterAnswer(Self.head(.http1_0)))
        #expect(!ConnectionCloseRule.closesAfterAnswer(Self.head(.http1_0, connection: "keep-alive")))
        #expect(!ConnectionCloseRule.closesAfterAnswer(Self.head(.http1_1)))
        #expect(ConnectionCloseRule.closesAfterAnswer(Self.head(.http1_1, connection: "Close")))
        #expect(ConnectionCloseRule.closesAfterAnswer(Self.head(.http1_1, .CONNECT)))
    }

    @Test func theHandlerWritesTheDecisionIntoTheRequest() throws {
        let channel = EmbeddedChannel(handler: ConnectionCloseRule(clock: ManualClock()))
        try channel.writeInbound(HTTPServerRequestPart.head(Self.head(.http1_0)))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        try channel.writeInbound(HTTPServerRequestPart.head(Self.head(.http1_1, connection: "keep-alive")))
        guard case .head(let closing)? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(closing.headers["connection"] == ["close"])
        guard case .end? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the end was not passed on")
            return
        }
        guard case .head(let kept)? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no second head")
            return
        }
        #expect(kept.headers["connection"] == ["keep-alive"])

        // The answers pass as their writers made them.
        let ok = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0"])
        let closes = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0", "connection": "close"])
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .continue)))
        try channel.writeOutbound(HTTPServerResponsePart.head(closes))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        try channel.writeOutbound(HTTPServerResponsePart.head(ok))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        var heads: [HTTPResponseHead] = []
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            if case .head(let h) = part { heads.append(h) }
        }
        #expect(heads.map(\.status) == [.continue, .ok, .ok])
        #expect(heads.map { $0.headers["connection"] } == [[], ["close"], []])
        #expect(try channel.finish().isClean)
    }

    /// Long enough that a connection closed within an exchange's 20 s was closed by the rule, not by the idle timeout
    /// (a loaded machine running the whole suite in parallel can take seconds to answer).
    static func longIdleTimeout(_ c: inout PushRelayConfig) { c.http.idleTimeoutMs = 120_000 }

    @Test func anHTTP10RequestIsAnsweredAndItsConnectionClosed() async throws {
        try await TestServer.with(configure: Self.longIdleTimeout) { (s: TestServer) async throws in
            let health = await RawHTTP.exchange(port: s.port, "GET /health HTTP/1.0\r\n\r\n", limit: 20)
            #expect(health.closed && health.ended < 20, "\(health)")
            #expect(health.responses.first?.status == 200, "\(health)")
            #expect(health.responses.first?.headers["connection"] == "close", "\(health)")

            // The Home Assistant route (answered by its fast path) too.
            let body = TestServer.haBody().jsonString()
            let notify = await RawHTTP.exchange(
                port: s.port,
                "POST /api/sendPush/android/v1 HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\n\r\n\(body)",
                limit: 20
            )
            #expect(notify.closed && notify.ended < 20, "\(notify)")
            #expect(notify.responses.first?.status == 201, "\(notify)")
            #expect(notify.responses.first?.headers["connection"] == "close", "\(notify)")

            // With keep-alive asked for, the connection stays open for the next request.
            let kept = await RawHTTP.exchange(
                port: s.port,
                "GET /health HTTP/1.0\r\nconnection: keep-alive\r\n\r\nGET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
                limit: 20
            )
            #expect(kept.responses.map(\.status) == [200, 200], "\(kept)")
            #expect(kept.closed, "\(kept)")
        }
    }

    @Test func connectIsAnsweredAndItsConnectionClosed() async throws {
        try await TestServer.with(configure: Self.longIdleTimeout) { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(port: s.port, "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n", limit: 20)
            #expect(exchange.closed && exchange.ended < 20, "closed by the rule, not after the idle timeout: \(exchange)")
            let status = exchange.responses.first?.status ?? Int(exchange.text.split(separator: " ").dropFirst().first ?? "") ?? 0
            #expect(status >= 400, "\(exchange)")
        }
    }

    static let ok = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0"])

    @Test func onceStoppingEveryRequestIsMarkedToClose() {
        var state = ConnectionCloseRule.State()
        // Read before the stop: unmarked (its answer, written once the stop began, says it: `ResponseHead`).
        let before = state.received(Self.head(.http1_1), stopping: false)
        #expect(before.headers["connection"] == [])
        #expect(state.answered() == .nothing)
        // Read during the stop: the request says it, so whoever answers closes.
        let during = state.received(Self.head(.http1_1, connection: "keep-alive"), stopping: true)
        #expect(during.headers["connection"] == ["close"])
        #expect(state.answered() == .nothing)
    }

    @Test func whenTheListenerStopsAnIdleConnectionLingersAndABusyOneClosesAfterItsAnswer() {
        var idle = ConnectionCloseRule.State()
        #expect(idle.quiesce() == .linger)
        #expect(idle.closesAfterLinger)
        // A request that was on its way when the linger began is answered, then the connection closes.
        let marked = idle.received(Self.head(.http1_1), stopping: true)
        #expect(marked.headers["connection"] == ["close"])
        #expect(!idle.closesAfterLinger)
        #expect(idle.answered() == .linger)

        // A busy one is closed by whoever answers, its answer saying `Connection: close` (`ResponseHead`, a stop
        // having begun); the rule only lingers should the connection outlive it.
        var busy = ConnectionCloseRule.State()
        _ = busy.received(Self.head(.http1_1), stopping: false)
        #expect(busy.quiesce() == .nothing)
        #expect(busy.answered() == .linger)
    }

    @Test func theHandlerClosesAnIdleConnectionAfterTheLinger() throws {
        let clock = ManualClock()
        let channel = EmbeddedChannel(handler: ConnectionCloseRule(clock: clock, isStopping: { true }))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        clock.advance(by: ConnectionCloseRule.linger - .milliseconds(1))
        #expect(channel.isActive)
        clock.advance(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    /// A notification read before the stop and answered after it: its answer says `Connection: close` and its
    /// connection closes, whether the fast path or the router answers it.
    @Test(arguments: [true, false])
    func anAnswerInFlightWhenTheStopBeginsClosesItsConnection(notifyInPipeline: Bool) async throws {
        let slow = ScriptedProvider(name: "slow", [.delay(milliseconds: 300, then: nil)])
        let body = TestServer.haBody(token: "stop-in-flight-0123456789").jsonString()
        let exchange = try await TestServer.with(
            providers: ["slow": slow],
            notifyInPipeline: notifyInPipeline,
            configure: { $0.apps = [.init(match: "*", provider: "slow")] }
        ) { (s: TestServer) async throws -> RawHTTP.Exchange in
            let port = s.port
            let request = Task {
                await RawHTTP.exchange(
                    port: port,
                    "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                        + "content-length: \(body.utf8.count)\r\n\r\n\(body)"
                )
            }
            try await eventually("the provider call starts") { slow.callCount > 0 }
            s.lifecycle.beginStop()
            return await request.value
        }
        #expect(exchange.responses.map(\.status) == [201], "\(exchange)")
        #expect(exchange.responses.first?.headers["connection"] == "close", "\(exchange)")
        #expect(exchange.closed, "\(exchange)")
    }

    @Test func aWebsocketUpgradePassesThroughUntouched() throws {
        let channel = EmbeddedChannel(handler: ConnectionCloseRule(clock: ManualClock(), isStopping: { true }))
        var upgrade = Self.head(.http1_1, connection: "Upgrade")
        upgrade.headers.add(name: "upgrade", value: "websocket")
        try channel.writeInbound(HTTPServerRequestPart.head(upgrade))
        guard case .head(let passed)? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(passed.headers["connection"] == ["Upgrade"])
        // What follows the upgrade request are raw bytes once NIO's decoder is gone; they pass as they are.
        try channel.writeInbound(ByteBuffer(string: "frame"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "frame"))
        _ = try channel.finish()
    }
}
