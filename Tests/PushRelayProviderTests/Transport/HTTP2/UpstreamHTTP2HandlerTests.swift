import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import PushRelayCore
import PushRelayTestSupport
import Testing

@testable import PushRelayProviders

/// The handler on an embedded channel: the frames it writes for a request, when it flushes, and how answers, resets,
/// GOAWAY, deadlines and a closed connection complete the requests' promises.
@Suite struct UpstreamHTTP2HandlerTests {
    final class Harness {
        let channel = EmbeddedChannel()
        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }
        let clock = ManualClock()
        let handler: UpstreamHTTP2Handler
        let unusable = UsableFlag()
        /// What each `onDead` report said: the requests waiting.
        let deadReports = Locked<[Int]>([])
        let goAways = Locked(0)

        init(idleTimeout: TimeAmount = .minutes(10)) throws {
            let flag = unusable
            let deadReports = self.deadReports
            let goAways = self.goAways
            handler = UpstreamHTTP2Handler(
                clock: clock,
                idleTimeout: Duration(idleTimeout),
                pingAfter: .seconds(1),
                pingTimeout: .seconds(2),
                onDead: { waiting in deadReports.withLock { $0.append(waiting) } },
                onGoAway: { goAways.withLock { $0 += 1 } }
            ) { flag.value.store(false, ordering: .relaxed) }
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            // The connection window is raised once, first.
            let raise = try #require(try channel.readOutbound(as: HTTP2Frame.self))
            guard case .windowUpdate(let increment) = raise.payload, raise.streamID == .rootStream else {
                Issue.record("expected a connection WINDOW_UPDATE, got \(raise)")
                return
            }
            #expect(increment == UpstreamHTTP2Handler.connectionWindow - 65_535)
        }

        func send(_ body: String = "{}", in timeout: TimeAmount = .seconds(10)) -> EventLoopFuture<UpstreamResponse> {
            let origin = UpstreamOrigin(secure: true, host: "fcm.example", port: 443)
            let request = UpstreamRequest(
                origin: origin,
                path: "/v1/send",
                headers: [(name: "authorization", value: "Bearer t")],
                body: ByteBuffer(string: body)
            )
            let promise = loop.makePromise(of: UpstreamResponse.self)
            handler.start(request, deadline: clock.instant + Duration(timeout), promise: promise)
            return promise.futureResult
        }

        /// Moves the handler's clock on (its timers fire on the loop's thread), then runs what they handed to the
        /// loop (the flushes).
        func advance(by amount: TimeAmount) {
            // In the handler's deadline ticks, as time passes for a process that is running.
            var left = Duration(amount)
            while left > .zero {
                let step = min(left, UpstreamHTTP2Handler.deadlineTick)
                clock.advance(by: step)
                loop.run()
                left -= step
            }
        }

        func outbound() throws -> [HTTP2Frame] {
            var frames: [HTTP2Frame] = []
            while let f = try channel.readOutbound(as: HTTP2Frame.self) { frames.append(f) }
            return frames
        }

        func answer(_ streamID: HTTP2StreamID, status: Int, body: String) throws {
            try channel.writeInbound(
                HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: HPACKHeaders([(":status", String(status))]), endStream: false)))
            )
            try channel.writeInbound(
                HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true)))
            )
        }
    }

    static func result(_ future: EventLoopFuture<UpstreamResponse>) -> Result<UpstreamResponse, any Error>? {
        var result: Result<UpstreamResponse, any Error>?
        future.assumeIsolated().whenComplete { result = $0 }
        return result
    }

    @Test func aRequestIsOneHeadersAndOneDataFrameFlushedOncePerLoopTurn() throws {
        let h = try Harness()
        let a = h.send(#"{"a":1}"#)
        let b = h.send(#"{"b":2}"#)
        // Written, not yet flushed: EmbeddedChannel hands out only flushed frames.
        #expect(try h.outbound().isEmpty)
        h.loop.run()
        let frames = try h.outbound()
        #expect(frames.map(\.streamID) == [1, 1, 3, 3])
        guard case .headers(let head) = frames[0].payload, case .data(let data) = frames[1].payload else {
            Issue.record("expected HEADERS then DATA, got \(frames)")
            return
        }
        #expect(!head.endStream && data.endStream)
        #expect(head.headers.first(name: ":method") == "POST")
        #expect(head.headers.first(name: ":path") == "/v1/send")
        #expect(head.headers.first(name: ":authority") == "fcm.example")
        #expect(head.headers.first(name: ":scheme") == "https")
        #expect(head.headers.first(name: "authorization") == "Bearer t")
        #expect(head.headers.first(name: "content-length") == "7")

        try h.answer(3, status: 200, body: #"{"name":"b"}"#)
        try h.answer(1, status: 404, body: #"{"error":{}}"#)
        let answerB = try #require(Self.result(b)).get()
        let answerA = try #require(Self.result(a)).get()
        #expect(answerB.status == 200 && answerB.json?["name"] == "b")
        #expect(answerA.status == 404)
    }

    /// What NIOHTTP2 does with HEADERS frames over the server's `SETTINGS_MAX_CONCURRENT_STREAMS`: holds them, and
    /// after a GOAWAY refuses them (`CreatedStreamAfterGoaway`), failing their promise and then reporting the same
    /// error to the handlers after it.
    final class StreamCapLayer: ChannelOutboundHandler {
        typealias OutboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame
        let holding: Set<HTTP2StreamID>
        var held: [(HTTP2Frame, EventLoopPromise<Void>?)] = []
        var context: ChannelHandlerContext?

        init(holding: Set<HTTP2StreamID>) { self.holding = holding }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let frame = unwrapOutboundIn(data)
            if holding.contains(frame.streamID) {
                held.append((frame, promise))
            } else {
                context.write(data, promise: promise)
            }
        }

        func refuseHeld() {
            for (_, promise) in held {
                let error = NIOHTTP2Errors.createdStreamAfterGoaway()
                promise?.fail(error)
                context?.fireErrorCaught(error)
            }
            held = []
        }
    }

    /// A harness whose second request (stream 3) is held under the stream cap by a `StreamCapLayer`, with both
    /// requests started and the first one's frames written: the harness, the layer and the two answers' futures.
    static func secondHeldUnderTheCap() throws -> (Harness, StreamCapLayer, EventLoopFuture<UpstreamResponse>, EventLoopFuture<UpstreamResponse>) {
        let h = try Harness()
        let layer = StreamCapLayer(holding: [3])
        try h.channel.pipeline.syncOperations.addHandler(layer, position: .before(h.handler))
        let a = h.send()
        let b = h.send()
        h.loop.run()
        return (h, layer, a, b)
    }

    @Test func aGoAwayWithStreamsHeldUnderTheCapFailsThemNotSentAndKeepsTheConnection() throws {
        let (h, layer, a, b) = try Self.secondHeldUnderTheCap()
        #expect(try h.outbound().map(\.streamID) == [1, 1])
        try h.channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil)))
        guard case .failure(let error) = Self.result(b) else {
            Issue.record("stream 3 was above the last stream ID")
            return
        }
        #expect(error as? UpstreamStreamFailure == .notSent, "it never left: not a resend")
        // The layer below now refuses the held frames and reports it; the connection stays for stream 1's answer.
        layer.refuseHeld()
        h.loop.run()
        #expect(h.channel.isActive)
        #expect(Self.result(a) == nil)
        try h.answer(1, status: 200, body: "{}")
        #expect(try Self.result(a)?.get().status == 200)
    }

    @Test func aConnectionErrorAfterARefusedFrameStillClosesTheConnection() throws {
        let (h, layer, a, b) = try Self.secondHeldUnderTheCap()
        layer.refuseHeld()
        h.loop.run()
        guard case .failure(let refused) = Self.result(b) else {
            Issue.record("a refused HEADERS frame fails its request")
            return
        }
        #expect(refused as? UpstreamStreamFailure == .notSent)
        #expect(h.channel.isActive)
        // A later error of the connection itself is not mistaken for a refused frame.
        h.channel.pipeline.fireErrorCaught(NIOHTTP2Errors.noSuchStream(streamID: 7))
        h.loop.run()
        #expect(!h.channel.isActive)
        guard case .failure(let error) = Self.result(a) else {
            Issue.record("stream 1 waited on a connection that closed")
            return
        }
        #expect(error as? UpstreamStreamFailure == .connectionClosed)
    }

    @Test func goAwaySendsTheUnprocessedBackAndClosesOnceDrained() throws {
        let h = try Harness()
        let a = h.send()
        let b = h.send()
        h.loop.run()
        _ = try h.outbound()
        try h.channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil)))
        #expect(h.unusable.value.load(ordering: .relaxed) == false)
        guard case .failure(let error) = Self.result(b) else {
            Issue.record("stream 3 was above the last stream ID")
            return
        }
        #expect(error as? UpstreamStreamFailure == .aboveGoAway)
        #expect(Self.result(a) == nil)
        #expect(h.channel.isActive)
        try h.answer(1, status: 200, body: "{}")
        #expect(try Self.result(a)?.get().status == 200)
        #expect(!h.channel.isActive)
        // No new request starts on a draining or closed connection.
        guard case .failure = Self.result(h.send()) else {
            Issue.record("a closed connection takes no request")
            return
        }
    }

    @Test func aSilentConnectionIsPingedThenGivenUpAsDead() throws {
        let h = try Harness()
        let a = h.send()
        let b = h.send()
        h.loop.run()
        _ = try h.outbound()
        h.advance(by: .milliseconds(950))
        #expect(try h.outbound().isEmpty, "not yet a second of silence")
        h.advance(by: .milliseconds(100))
        let ping = try h.outbound()
        guard ping.count == 1, case .ping(_, ack: false) = ping[0].payload, ping[0].streamID == .rootStream else {
            Issue.record("expected one PING, got \(ping)")
            return
        }
        h.advance(by: .milliseconds(1900))
        #expect(Self.result(a) == nil && h.channel.isActive, "the PING has two seconds")
        h.advance(by: .milliseconds(150))
        for request in [a, b] {
            guard case .failure(let error) = Self.result(request) else {
                Issue.record("a request on a dead connection fails")
                return
            }
            #expect(error as? UpstreamStreamFailure == .connectionDead)
        }
        #expect(!h.channel.isActive)
        #expect(h.unusable.value.load(ordering: .relaxed) == false)
        #expect(h.deadReports.withLock { $0 } == [2], "reported once, with the two requests it held")
    }

    @Test func aConnectionThatAnswersItsPingIsKept() throws {
        let h = try Harness()
        let a = h.send()
        h.loop.run()
        _ = try h.outbound()
        h.advance(by: .milliseconds(1050))
        guard case .ping(let data, ack: false)? = try h.outbound().first?.payload else {
            Issue.record("expected a PING")
            return
        }
        try h.channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .ping(data, ack: true)))
        h.advance(by: .seconds(2))
        #expect(Self.result(a) == nil && h.channel.isActive, "a slow answer on a live connection is waited for")
        // Any frame counts: an answer to another stream keeps it alive too.
        let b = h.send()
        h.loop.run()
        try h.answer(3, status: 200, body: "{}")
        #expect(try Self.result(b)?.get().status == 200)
        h.advance(by: .milliseconds(1500))
        #expect(h.channel.isActive && h.deadReports.withLock { $0 }.isEmpty)
        try h.answer(1, status: 200, body: "{}")
        #expect(try Self.result(a)?.get().status == 200)
    }

    @Test func anIdleConnectionIsNotPinged() throws {
        let h = try Harness()
        let a = h.send()
        h.loop.run()
        try h.answer(1, status: 200, body: "{}")
        #expect(try Self.result(a)?.get().status == 200)
        _ = try h.outbound()
        h.advance(by: .seconds(30))
        #expect(try h.outbound().isEmpty && h.channel.isActive)
    }

    @Test func aGoAwayIsReportedOnce() throws {
        let h = try Harness()
        _ = h.send()
        h.loop.run()
        for _ in 0..<2 {
            try h.channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil)))
        }
        #expect(h.goAways.withLock { $0 } == 1)
    }

    @Test func aResetFailsOnlyItsStream() throws {
        let h = try Harness()
        let a = h.send()
        let b = h.send()
        try h.channel.writeInbound(HTTP2Frame(streamID: 1, payload: .rstStream(.internalError)))
        guard case .failure(let error) = Self.result(a) else {
            Issue.record("the reset stream fails")
            return
        }
        #expect(error as? UpstreamStreamFailure == .reset(code: Int(HTTP2ErrorCode.internalError.networkCode)))
        try h.answer(3, status: 200, body: "{}")
        #expect(try Self.result(b)?.get().status == 200)
    }

    @Test func aDeadlineFailsTheRequestAndResetsItsStream() throws {
        let h = try Harness()
        let slow = h.send(in: .milliseconds(200))
        let patient = h.send(in: .seconds(5))
        h.loop.run()
        _ = try h.outbound()
        h.advance(by: .milliseconds(150))
        #expect(Self.result(slow) == nil)
        h.advance(by: .milliseconds(100))
        guard case .failure(let error) = Self.result(slow) else {
            Issue.record("past its deadline the request fails")
            return
        }
        #expect(error as? UpstreamStreamFailure == .timedOut)
        let frames = try h.outbound()
        #expect(frames.count == 1 && frames[0].streamID == 1)
        guard case .rstStream(.cancel) = frames.first?.payload else {
            Issue.record("the expired stream is reset, got \(frames)")
            return
        }
        #expect(Self.result(patient) == nil)
    }

    @Test func aClosedConnectionFailsEveryRequestAndIsUnusable() throws {
        let h = try Harness()
        let a = h.send()
        try h.channel.close().wait()
        guard case .failure(let error) = Self.result(a) else {
            Issue.record("the request fails with the connection")
            return
        }
        #expect(error as? UpstreamStreamFailure == .connectionClosed)
        #expect(h.unusable.value.load(ordering: .relaxed) == false)
    }

    @Test func anIdleConnectionClosesAfterItsIdleTimeout() throws {
        let h = try Harness(idleTimeout: .seconds(60))
        let a = h.send()
        h.loop.run()
        try h.answer(1, status: 200, body: "{}")
        #expect(try Self.result(a)?.get().status == 200)
        h.advance(by: .seconds(59))
        #expect(h.channel.isActive)
        h.advance(by: .seconds(2))
        #expect(!h.channel.isActive)
        #expect(h.unusable.value.load(ordering: .relaxed) == false)
    }

    @Test func readDataIsHandedBackToTheConnectionWindow() throws {
        let h = try Harness()
        let a = h.send()
        h.loop.run()
        _ = try h.outbound()
        let big = String(repeating: "x", count: 40 * 1024)
        try h.answer(1, status: 500, body: big)
        #expect(try Self.result(a)?.get().body.count == 40 * 1024)
        h.loop.run()
        let frames = try h.outbound()
        #expect(
            frames.contains { frame in
                if case .windowUpdate(let n) = frame.payload, frame.streamID == .rootStream { return n == 40 * 1024 }
                return false
            }
        )
    }
}
