import NIOCore
import NIOEmbedded
import NIOHTTP1
import PushRelayCore
import PushRelayHTTP
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The parse-error answerer in an embedded channel: the JSON error it writes for bytes NIO's decoder refused has every
/// answer's head (`ResponseHead`), and it waits for the answers of the requests before the bad bytes.
@Suite struct HTTPParseErrorAnswererTests {
    static func channel() throws -> (EmbeddedChannel, ManualClock) {
        let clock = ManualClock("1994-11-06T08:49:37Z")
        let channel = EmbeddedChannel(handler: HTTPParseErrorAnswerer(head: ResponseHead(serverName: "PushRelay", clock: clock)))
        try channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        return (channel, clock)
    }

    /// The response parts written, as (head, body).
    static func answer(_ channel: EmbeddedChannel) throws -> (HTTPResponseHead?, String) {
        var head: HTTPResponseHead?
        var body = ""
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            switch part {
            case .head(let h): head = h
            case .body(.byteBuffer(let b)): body += String(buffer: b)
            case .body, .end: break
            }
        }
        return (head, body)
    }

    @Test func aParseErrorIsAnsweredWithEveryAnswersHeadThenTheConnectionCloses() throws {
        let (channel, _) = try Self.channel()
        channel.pipeline.fireErrorCaught(HTTPParserError.invalidHeaderToken)
        let (head, body) = try Self.answer(channel)
        #expect(head?.status == .badRequest)
        #expect(head?.version == .http1_1)
        #expect(
            head?.headers.map { "\($0.name): \($0.value)" } == [
                "Content-Type: application/json", "Content-Length: \(body.utf8.count)", "Date: Sun, 06 Nov 1994 08:49:37 GMT",
                "Server: PushRelay", "Connection: close",
            ]
        )
        let json = try JSONParser.parse(Array(body.utf8))
        #expect(json["errorType"] == "InvalidRequest")
        #expect(json["message"]?.stringValue?.isEmpty == false)
        #expect(!channel.isActive)
        #expect(throws: HTTPParserError.self) { try channel.throwIfErrorCaught() }
    }

    @Test func headersPastTheLimitAre431WithItsReasonPhrase() throws {
        let (channel, _) = try Self.channel()
        channel.pipeline.fireErrorCaught(HTTPParserError.headerOverflow)
        let (head, _) = try Self.answer(channel)
        #expect(head?.status.code == 431)
        #expect(head?.status.reasonPhrase == "Request Header Fields Too Large")
        #expect(head?.headers["Connection"] == ["close"])
    }

    @Test func theErrorWaitsForTheAnswerOfTheRequestBeforeIt() throws {
        let (channel, clock) = try Self.channel()
        try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/health")))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        channel.pipeline.fireErrorCaught(HTTPParserError.invalidHeaderToken)
        #expect(try Self.answer(channel).0 == nil, "the request before the bad bytes is answered first")
        #expect(channel.isActive)

        clock.advance(by: .seconds(2))
        let ok = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "0"])
        try channel.writeOutbound(HTTPServerResponsePart.head(ok))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        var heads: [HTTPResponseHead] = []
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            if case .head(let h) = part { heads.append(h) }
        }
        #expect(heads.map(\.status) == [.ok, .badRequest])
        #expect(heads.last?.headers["Date"] == ["Sun, 06 Nov 1994 08:49:39 GMT"], "dated when it is written")
        #expect(!channel.isActive)
    }
}
