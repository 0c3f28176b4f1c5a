import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PushRelayCore
import PushRelayDelivery
import PushRelayHTTP
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The fast path's handler in an `NIOAsyncTestingChannel` (an embedded channel whose loop accepts work from the task
/// that prepares the answer): what it answers itself, what it passes on, and when it closes.
@Suite(.timeLimit(.minutes(1))) struct NotifyFastPathHandlerTests {
    /// The bodies the endpoint was asked to answer.
    final class Seen: Sendable {
        private let bodies = Locked<[String]>([])
        func append(_ s: String) { bodies.withLock { $0.append(s) } }
        var all: [String] { bodies.withLock { $0 } }
    }

    /// The paths the test endpoints answer.
    static let paths = ["/api/sendPush/android/v1", "/api/sendPush/iOS/v1", "/api/sendPushNotification"]

    /// An endpoint that answers `paths` with `handle` (given the body and the path).
    static func endpoint(
        maxBodyBytes: Int = 1024,
        serverName: String? = nil,
        isStopping: @escaping @Sendable () -> Bool = { false },
        handle: @escaping @Sendable (ByteBuffer, String) -> NotifyFastPath.Endpoint.Handling
    ) -> NotifyFastPath.Endpoint {
        var routes: [String: NotifyFastPath.Endpoint.Handler] = [:]
        for path in paths { routes[path] = { handle($0, path) } }
        return NotifyFastPath.Endpoint(
            routes: routes,
            bodyLimit: BodyLimit(maxBytes: maxBodyBytes),
            head: ResponseHead(serverName: serverName, clock: ManualClock(), isStopping: isStopping)
        )
    }

    /// An endpoint that answers every request 201 by a task, noting its path and body in `seen`.
    static func endpoint(
        maxBodyBytes: Int = 1024,
        seen: Seen = Seen(),
        isStopping: @escaping @Sendable () -> Bool = { false }
    )
        -> NotifyFastPath.Endpoint
    {
        endpoint(maxBodyBytes: maxBodyBytes, serverName: "PushRelay", isStopping: isStopping) { body, path in
            .later {
                seen.append("\(path):\(String(buffer: body))")
                return (.created, [:], Array(#"{"messageId":"m"}"#.utf8))
            }
        }
    }

    static func channel(_ endpoint: NotifyFastPath.Endpoint) async throws -> NIOAsyncTestingChannel {
        let channel = NIOAsyncTestingChannel()
        try await channel.pipeline.addHandler(NotifyFastPath(endpoint: endpoint))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        #expect(channel.isActive)
        return channel
    }

    static func post(_ path: String, headers: HTTPFields = [:]) -> HTTPRequestPart {
        .head(HTTPRequest(method: .post, scheme: nil, authority: nil, path: path, headerFields: headers))
    }

    /// The next `count` response parts, waiting for them (the answer is prepared by a task) at most 10 s.
    static func responses(_ channel: NIOAsyncTestingChannel, count: Int) async throws -> [HTTPResponsePart] {
        try await within(.seconds(10), "\(count) response parts") {
            var out: [HTTPResponsePart] = []
            while out.count < count { out.append(try await channel.waitForOutboundWrite(as: HTTPResponsePart.self)) }
            return out
        }
    }

    /// Waits (at most 10 s) for the handler to close the channel; a channel left open fails the test instead of
    /// hanging it (`closeFuture.get()` ignores the suite's time limit).
    static func closed(_ channel: NIOAsyncTestingChannel) async throws {
        try await within(.seconds(10), "the channel's close") { try await channel.closeFuture.get() }
    }

    @Test func aNotifyPostIsAnsweredByTheEndpointWithTheJSONHeaders() async throws {
        let seen = Seen()
        let channel = try await Self.channel(Self.endpoint(seen: seen))
        try await channel.writeInbound(Self.post("/api/sendPush/android/v1?x=1"))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{\"message\":")))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "\"hi\"}")))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try await channel.readInbound(as: HTTPRequestPart.self) == nil, "nothing reaches Hummingbird")
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
        #expect(seen.all == [#"/api/sendPush/android/v1:{"message":"hi"}"#])
        #expect(channel.isActive)
    }

    @Test func otherRequestsArePassedOnUntouched() async throws {
        let channel = try await Self.channel(Self.endpoint())
        let get = HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/sendPush/android/v1"))
        try await channel.writeInbound(get)
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try await channel.readInbound(as: HTTPRequestPart.self) == get)
        #expect(try await channel.readInbound(as: HTTPRequestPart.self) == .end(nil))
        let upgrade = Self.post("/api/sendPushNotification", headers: [HTTPField.Name.upgrade: "h2c"])
        // Hummingbird answers the GET first; then the upgrade offer is passed on as well.
        try await channel.writeOutbound(HTTPResponsePart.end(nil))
        try await channel.writeInbound(upgrade)
        #expect(try await channel.readInbound(as: HTTPRequestPart.self) == upgrade)
    }

    @Test func anOversizedBodyIs413AndTheConnectionCloses() async throws {
        let seen = Seen()
        let channel = try await Self.channel(Self.endpoint(maxBodyBytes: 8, seen: seen))
        try await channel.writeInbound(Self.post("/api/sendPush/iOS/v1"))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: String(repeating: "x", count: 20))))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .contentTooLarge)
        #expect(head.headerFields[.connection] == "close")
        #expect(seen.all.isEmpty)
        try await Self.closed(channel)  // closed after the answer
    }

    @Test func aBodyDeclaredPastTheLimitIsDroppedAnd413() async throws {
        let seen = Seen()
        let channel = try await Self.channel(Self.endpoint(maxBodyBytes: 8, seen: seen))
        try await channel.writeInbound(Self.post("/api/sendPushNotification", headers: [.contentLength: "20"]))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: String(repeating: "x", count: 20))))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .contentTooLarge)
        #expect(head.headerFields[.connection] == "close")
        #expect(seen.all.isEmpty)
        try await Self.closed(channel)
    }

    @Test func a413OfTheRouteItselfKeepsTheConnection() async throws {
        // A 413 that is the route's answer (a provider refusing the payload), not the body limit's.
        let channel = try await Self.channel(
            Self.endpoint { _, _ in .now((.contentTooLarge, [:], Array(#"{"message":"payload too large for the provider"}"#.utf8))) }
        )
        try await channel.writeInbound(Self.post("/api/sendPush/android/v1"))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{}")))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .contentTooLarge)
        #expect(head.headerFields[.connection] == nil)
        #expect(channel.isActive)
    }

    @Test func anAnswerWrittenOnceAStopBeganClosesTheConnection() async throws {
        let stopping = Locked(false)
        let channel = try await Self.channel(Self.endpoint(isStopping: { stopping.withLock { $0 } }))
        try await channel.writeInbound(Self.post("/api/sendPush/android/v1"))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{}")))
        stopping.withLock { $0 = true }
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .created)
        #expect(head.headerFields[.connection] == "close")
        try await Self.closed(channel)
    }

    @Test func connectionCloseIsHonouredAfterTheAnswer() async throws {
        let channel = try await Self.channel(Self.endpoint())
        try await channel.writeInbound(Self.post("/api/sendPushNotification", headers: [HTTPField.Name.connection: "close"]))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{}")))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        let parts = try await Self.responses(channel, count: 3)
        guard case .head(let head) = parts.first else {
            Issue.record("no response head")
            return
        }
        #expect(head.status == .created)
        #expect(head.headerFields[.connection] == "close")
        try await Self.closed(channel)  // closed after the answer
    }

    @Test func anAnswerDecidedWithoutWaitingIsWrittenWithinTheReadAndTheConnectionGoesOn() async throws {
        // A body starting with "now" is answered on the loop (as bad input is); others by a task.
        let endpoint = Self.endpoint { body, _ in
            let text = String(buffer: body)
            let answer: NotifyFastPath.Endpoint.Answer = (.serviceUnavailable, [.retryAfter: "1"], Array(#"{"message":"\#(text)"}"#.utf8))
            if text.hasPrefix("now") { return .now(answer) }
            return .later { (.created, [:], Array(#"{"messageId":"\#(text)"}"#.utf8)) }
        }
        let channel = try await Self.channel(endpoint)
        try await channel.writeInbound(Self.post("/api/sendPush/android/v1"))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "now-1")))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
        // Already written when the read returns: no task ran in between.
        guard case .head(let head)? = try await channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("the answer was not written within the read")
            return
        }
        #expect(head.status == .serviceUnavailable)
        #expect(head.headerFields[.retryAfter] == "1")
        #expect(head.headerFields[.contentType] == "application/json")
        guard case .body(let body)? = try await channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no body")
            return
        }
        #expect(String(buffer: body) == #"{"message":"now-1"}"#)
        #expect(try await channel.readOutbound(as: HTTPResponsePart.self) == .end(nil))
        // The connection goes on: a request answered by a task, then one answered at once, each in its turn.
        for text in ["later-2", "now-3"] {
            try await channel.writeInbound(Self.post("/api/sendPush/android/v1"))
            try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: text)))
            try await channel.writeInbound(HTTPRequestPart.end(nil))
            let parts = try await Self.responses(channel, count: 3)
            guard case .head(let head) = parts[0], case .body(let body) = parts[1] else {
                Issue.record("no answer to \(text)")
                return
            }
            #expect(head.status == (text.hasPrefix("now") ? .serviceUnavailable : .created))
            #expect(String(buffer: body).contains(text))
        }
        #expect(channel.isActive)
    }

    /// Counts the reads the handler passes on (it sits before it, at the pipeline's head).
    final class ReadCounter: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = Any
        private let count = Locked(0)
        var reads: Int { count.withLock { $0 } }
        func read(context: ChannelHandlerContext) {
            count.withLock { $0 += 1 }
            context.read()
        }
    }

    /// An endpoint that answers every request at once with 400 (as bad input is), its body naming the request's body.
    static func answeringAtOnce() -> NotifyFastPath.Endpoint {
        endpoint { body, _ in .now((.badRequest, [:], Array(#"{"message":"\#(String(buffer: body))"}"#.utf8))) }
    }

    /// Writes one notify request with `body`.
    static func writeNotify(_ channel: NIOAsyncTestingChannel, _ body: String) async throws {
        try await channel.writeInbound(post("/api/sendPush/android/v1"))
        try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: body)))
        try await channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// The bodies of the answers written so far, in order.
    static func answeredBodies(_ channel: NIOAsyncTestingChannel) async throws -> [String] {
        var bodies: [String] = []
        while let part = try await channel.readOutbound(as: HTTPResponsePart.self) {
            if case .body(let b) = part { bodies.append(String(buffer: b)) }
        }
        return bodies
    }

    /// Turns the channel unwritable after `after` answers have ended, as NIO does once the answers a client does not
    /// read pass the high watermark (it sits at the pipeline's head, so it sees every answer written).
    final class Watermark: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        let after: Int
        private let ended = Locked(0)
        init(after: Int) { self.after = after }
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            context.write(data, promise: promise)
            guard case .end = unwrapOutboundIn(data) else { return }
            let n = ended.withLock { (count: inout Int) -> Int in
                count += 1
                return count
            }
            if n == after, let channel = context.channel as? NIOAsyncTestingChannel {
                channel.isWritable = false
                context.pipeline.syncOperations.fireChannelWritabilityChanged()
            }
        }
    }

    @Test func pipelinedRequestsToAClientThatDoesNotReadStopReadingAndWaitInOrder() async throws {
        let channel = try await Self.channel(Self.answeringAtOnce())
        let reads = ReadCounter()
        try await channel.pipeline.addHandler(reads, position: .first)
        try await channel.pipeline.addHandler(Watermark(after: 2), position: .first)
        // Ten pipelined requests in one go (what one read of the socket decodes to): two are answered, then the
        // channel is not writable and the rest wait; the read NIO asks for next is held.
        for i in 1...10 { try await Self.writeNotify(channel, "r\(i)") }
        try await channel.testingEventLoop.executeInContext { channel.pipeline.read() }
        #expect(try await Self.answeredBodies(channel) == [#"{"message":"r1"}"#, #"{"message":"r2"}"#])
        #expect(reads.reads == 0, "nothing more is read while the client does not read")
        // The client reads: the channel is writable again, and the rest are answered in order, then reading resumes.
        try await channel.testingEventLoop.executeInContext {
            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
        }
        #expect(try await Self.answeredBodies(channel) == (3...10).map { #"{"message":"r\#($0)"}"# })
        #expect(reads.reads == 1, "the held read is issued once")
        #expect(channel.isActive)
    }

    @Test func aClientPipeliningPastTheBoundWhileNotReadingIsClosed() async throws {
        let channel = try await Self.channel(Self.answeringAtOnce())
        try await channel.testingEventLoop.executeInContext {
            channel.isWritable = false
            channel.pipeline.fireChannelWritabilityChanged()
        }
        let bound = NotifyFastPath.StateMachine.defaultMaxHeldRequests
        for i in 0..<bound { try await Self.writeNotify(channel, "r\(i)") }
        #expect(try await Self.answeredBodies(channel).isEmpty, "nothing is answered while the channel is not writable")
        #expect(channel.isActive, "up to the bound, requests wait")
        try await channel.writeInbound(Self.post("/api/sendPush/android/v1"))
        try await Self.closed(channel)
        #expect(try await Self.answeredBodies(channel).isEmpty)
    }

    @Test func aRequestWaitingAtTheInFlightBoundHoldsItsConnectionsReadsUntilItIsAnswered() async throws {
        // One place; the request holding it waits until the test lets it go.
        let gate = ProviderGate(limit: 1, maxWait: .seconds(30), clock: ManualClock())
        let letGo = AsyncStream.makeStream(of: Void.self)
        let firstHolds = Locked(false)
        let endpoint = Self.endpoint { body, _ in
            let text = String(buffer: body)
            return .later {
                guard await gate.acquire(client: text) else { return (.serviceUnavailable, [:], Array(#"{"message":"refused"}"#.utf8)) }
                defer { gate.release() }
                if text == "first" {
                    firstHolds.withLock { $0 = true }
                    for await _ in letGo.stream { break }
                }
                return (.created, [:], Array(#"{"messageId":"\#(text)"}"#.utf8))
            }
        }
        let first = try await Self.channel(endpoint)
        let second = try await Self.channel(endpoint)
        let reads = ReadCounter()
        try await second.pipeline.addHandler(reads, position: .first)
        for (channel, text) in [(first, "first"), (second, "second")] {
            try await channel.writeInbound(Self.post("/api/sendPush/android/v1"))
            try await channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: text)))
            try await channel.writeInbound(HTTPRequestPart.end(nil))
            if text == "first" {
                try await eventually("the first request holds the place") { firstHolds.withLock { $0 } }
            }
        }
        try await eventually("the second request waits for the place") { gate.waiting == 1 }
        // While it waits, its client sends another request on the same connection: it is held, and so is the read NIO
        // asks for next, so nothing more is read from that connection until the waiting request is answered.
        let health = HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/health"))
        try await second.writeInbound(health)
        try await second.writeInbound(HTTPRequestPart.end(nil))
        try await second.testingEventLoop.executeInContext { second.pipeline.read() }
        #expect(reads.reads == 0, "no read while the request waits")
        #expect(try await second.readInbound(as: HTTPRequestPart.self) == nil, "the next request is held")
        #expect(try await second.readOutbound(as: HTTPResponsePart.self) == nil, "not answered yet")
        // The place is freed: the waiting request is served, then the held request goes on and reading resumes.
        letGo.continuation.yield()
        let answer = try await Self.responses(second, count: 3)
        guard case .head(let head) = answer[0], case .body(let body) = answer[1] else {
            Issue.record("no answer")
            return
        }
        #expect(head.status == .created)
        #expect(String(buffer: body).contains("second"))
        try await eventually("the held request is passed on") { try await second.readInbound(as: HTTPRequestPart.self) == health }
        try await eventually("the held read is passed on") { reads.reads == 1 }
        _ = try await Self.responses(first, count: 3)
        #expect(gate.waiting == 0)
    }
}
