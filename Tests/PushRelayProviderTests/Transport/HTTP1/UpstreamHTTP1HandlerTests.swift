import NIOCore
import NIOEmbedded
import NIOHTTP1
import PushRelayTestSupport
import Testing

@testable import PushRelayProviders

/// The handler on an embedded channel: what it writes for a request and when it flushes, how an answer completes the
/// promise, and how the deadline, a close and the idle timeout end the connection.
@Suite struct UpstreamHTTP1HandlerTests {
    final class Harness {
        let channel = EmbeddedChannel()
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }
        let clock = ManualClock()
        let handler: UpstreamHTTP1Handler
        let unusable = UsableFlag()

        init(idleTimeout: TimeAmount = .minutes(10)) throws {
            let flag = unusable
            handler = UpstreamHTTP1Handler(clock: clock, idleTimeout: Duration(idleTimeout)) { flag.value.store(false, ordering: .relaxed) }
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        }

        var usable: Bool { unusable.value.load(ordering: .relaxed) }

        func send(_ body: String = "{}", in timeout: TimeAmount = .seconds(10)) -> EventLoopFuture<UpstreamResponse> {
            let request = UpstreamRequest(
                origin: UpstreamOrigin(secure: false, host: "push.example", port: 8080),
                path: "/wpush/v2/abc?x=1",
                headers: [(name: "ttl", value: "60")],
                body: ByteBuffer(string: body)
            )
            let promise = loop.makePromise(of: UpstreamResponse.self)
            handler.start(request, deadline: clock.instant + Duration(timeout), promise: promise)
            return promise.futureResult
        }

        /// Moves the handler's clock on (its timers fire on the loop's thread), then runs what they handed to the
        /// loop (the flushes).
        func advance(by amount: TimeAmount) {
            clock.advance(by: Duration(amount))
            loop.run()
        }

        func outbound() throws -> [HTTPClientRequestPart] {
            var parts: [HTTPClientRequestPart] = []
            while let p = try channel.readOutbound(as: HTTPClientRequestPart.self) { parts.append(p) }
            return parts
        }

        func answer(status: HTTPResponseStatus, headers: [(String, String)] = [], body: String) throws {
            try channel.writeInbound(HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(headers))))
            try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(string: body)))
            try channel.writeInbound(HTTPClientResponsePart.end(nil))
        }
    }

    @Test func aRequestIsWrittenAsHeadBodyAndEndWithHostAndLength() throws {
        let h = try Harness()
        let answer = h.send("{\"a\":1}")
        let parts = try h.outbound()
        #expect(parts.count == 3)
        guard case .head(let head) = parts.first, case .body(.byteBuffer(let body)) = parts[1], case .end(nil) = parts[2] else {
            Issue.record("got \(parts)")
            return
        }
        #expect(head.method == .POST)
        #expect(head.uri == "/wpush/v2/abc?x=1")
        #expect(head.version == .http1_1)
        #expect(head.headers["host"] == ["push.example:8080"])
        #expect(head.headers["ttl"] == ["60"])
        #expect(head.headers["content-length"] == ["7"])
        #expect(String(buffer: body) == "{\"a\":1}")
        try h.answer(status: .created, headers: [("location", "/m/1")], body: "")
        let response = try answer.wait()
        #expect(response.status == 201)
        #expect(response.header("location") == "/m/1")
        #expect(h.usable)
    }

    @Test func pastTheDeadlineTheRequestFailsAndTheConnectionCloses() throws {
        let h = try Harness()
        let answer = h.send(in: .seconds(2))
        _ = try h.outbound()
        h.advance(by: .seconds(1))
        #expect(h.usable)
        h.advance(by: .seconds(1))
        #expect(throws: UpstreamStreamFailure.timedOut) { try answer.wait() }
        #expect(!h.usable)
        #expect(!h.channel.isActive)
    }

    @Test func aClosedConnectionFailsTheWaitingRequest() throws {
        let h = try Harness()
        let answer = h.send()
        _ = try h.outbound()
        h.channel.pipeline.fireChannelInactive()
        #expect(throws: UpstreamStreamFailure.connectionClosed) { try answer.wait() }
        #expect(!h.usable)
    }

    @Test func anIdleConnectionClosesAfterTheIdleTimeoutAndABusyOneDoesNot() throws {
        let h = try Harness(idleTimeout: .seconds(30))
        let answer = h.send(in: .seconds(60))
        h.advance(by: .seconds(40))
        #expect(h.channel.isActive, "a request is waiting")
        try h.answer(status: .ok, body: "{}")
        _ = try answer.wait()
        h.advance(by: .seconds(29))
        #expect(h.channel.isActive)
        h.advance(by: .seconds(1))
        #expect(!h.channel.isActive)
        #expect(!h.usable)
    }
}
