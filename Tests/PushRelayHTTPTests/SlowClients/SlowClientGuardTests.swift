import NIOCore
import NIOEmbedded
import PushRelayCore
import PushRelayHTTP
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The slow-client guard in an embedded channel, on a stepped clock: a request not received in full within the request
/// timeout is answered 408 with every answer's head, and the connection closes; an idle one closes without an answer.
@Suite struct SlowClientGuardTests {
    static func channel(clock: ManualClock) throws -> EmbeddedChannel {
        let settings = SlowClientGuard.Settings(requestTimeout: .seconds(2), idleTimeout: .seconds(60), clock: clock)
        let head = ResponseHead(serverName: "PushRelay", clock: clock)
        let channel = EmbeddedChannel(handler: SlowClientGuard(settings: settings, head: head))
        try channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        return channel
    }

    /// The bytes the guard wrote.
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let part = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = part else { continue }
            text += String(buffer: buffer)
        }
        return text
    }

    @Test func aRequestNotReceivedInFullIsAnswered408WithEveryAnswersHead() throws {
        let clock = ManualClock("1994-11-06T08:49:37Z")
        let channel = try Self.channel(clock: clock)
        try channel.writeInbound(ByteBuffer(string: "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: x\r\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self) != nil, "passed on to the decoder")
        clock.advance(by: .milliseconds(1999))
        #expect(try Self.written(channel).isEmpty)
        #expect(channel.isActive)

        clock.advance(by: .milliseconds(1))
        let text = try Self.written(channel)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(parts.count == 2, "\(text)")
        let body = parts.last ?? ""
        #expect(
            parts.first?.components(separatedBy: "\r\n") == [
                "HTTP/1.1 408 Request Timeout", "Content-Type: application/json", "Content-Length: \(body.utf8.count)",
                "Date: Sun, 06 Nov 1994 08:49:39 GMT", "Server: PushRelay", "Connection: close",
            ],
            "\(text)"
        )
        let json = try JSONParser.parse(Array(body.utf8))
        #expect(json["errorType"] == "RequestTimeout")
        #expect(json["message"]?.stringValue?.contains("http.request_timeout") == true, "\(body)")
        #expect(!channel.isActive, "closed after the answer")
    }

    @Test func anIdleConnectionIsClosedWithoutAnAnswer() throws {
        let clock = ManualClock()
        let channel = try Self.channel(clock: clock)
        clock.advance(by: .seconds(59))
        #expect(channel.isActive)
        clock.advance(by: .seconds(1))
        #expect(try Self.written(channel).isEmpty)
        #expect(!channel.isActive)
    }
}
