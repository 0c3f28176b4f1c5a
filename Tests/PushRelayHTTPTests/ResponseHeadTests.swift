import HTTPTypes
import NIOCore
import PushRelayCore
import PushRelayHTTP
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// Every answer's common head fields: `Date` on the server's time port, `Server`, and `Connection: close` exactly when
/// the connection ends after the answer; and the whole head of an answer written below the router, which ends its
/// connection.
@Suite struct ResponseHeadTests {
    static let json: HTTPFields = [.contentType: "application/json", .contentLength: "2"]

    @Test func dateAndServerOnTheServersTime() {
        let clock = ManualClock("1994-11-06T08:49:37Z")
        let head = ResponseHead(serverName: "PushRelay", clock: clock)
        var fields = Self.json
        let closes = head.complete(&fields, request: [:])
        #expect(!closes)
        #expect(fields[.date] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(fields[.server] == "PushRelay")
        #expect(fields[.connection] == nil)
        // The answer's own fields first, in order; the common ones after them.
        #expect(fields.map(\.name) == [.contentType, .contentLength, .date, .server])

        clock.advance(by: .seconds(3600 * 24 * 40 + 1))
        var later = Self.json
        head.complete(&later, request: [:])
        #expect(later[.date] == "Fri, 16 Dec 1994 08:49:38 GMT")
    }

    @Test func noServerHeaderWithoutAName() {
        var fields = Self.json
        ResponseHead(serverName: nil, clock: ManualClock()).complete(&fields, request: [:])
        #expect(fields[.server] == nil)
        #expect(fields[.date] != nil)
    }

    @Test func theConnectionClosesWhenTheRequestAsks() {
        let head = ResponseHead(serverName: nil, clock: ManualClock())
        var fields = Self.json
        #expect(head.complete(&fields, request: [.connection: "close"]))
        #expect(fields[.connection] == "close")
        var kept = Self.json
        #expect(!head.complete(&kept, request: [.connection: "keep-alive"]))
        #expect(kept[.connection] == nil)
    }

    @Test func theConnectionClosesAfterABodyPastTheLimit() {
        let head = ResponseHead(serverName: nil, clock: ManualClock())
        let error = BodyLimit(maxBytes: 8).tooLarge(path: "/any")
        var fields = JSONResponse.headers(error.headers, contentLength: 10)
        #expect(head.complete(&fields, request: [:]))
        #expect(fields[values: .connection] == ["close"])
    }

    @Test func theConnectionClosesOnceAStopHasBegun() {
        let stopping = Locked(false)
        let head = ResponseHead(serverName: nil, clock: ManualClock(), isStopping: { stopping.withLock { $0 } })
        var before = Self.json
        #expect(!head.complete(&before, request: [:]))
        stopping.withLock { $0 = true }
        var after = Self.json
        #expect(head.complete(&after, request: [:]))
        #expect(after[.connection] == "close")
    }

    @Test func anErrorBelowTheRouterHasTheRoutersJSONHeadAndCloses() throws {
        let head = ResponseHead(serverName: "PushRelay", clock: ManualClock("1994-11-06T08:49:37Z"))
        let error = APIError(.requestTimeout, "RequestTimeout", "too slow", headers: [.retryAfter: "1"])
        let answer = head.closing(error)
        #expect(answer.head.status == .requestTimeout)
        #expect(answer.body == JSONWriter.bytes(error.body))
        // As the router writes a JSON error whose request asked to close: the error's fields, the JSON ones, the
        // common ones.
        var routers = JSONResponse.headers(error.headers, contentLength: answer.body.count)
        head.complete(&routers, request: [.connection: "close"])
        #expect(answer.head.headerFields == routers)
        #expect(answer.head.headerFields.map(\.name) == [.retryAfter, .contentType, .contentLength, .date, .server, .connection])
        #expect(answer.head.headerFields[.contentLength] == "\(answer.body.count)")
        #expect(answer.head.headerFields[.date] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(answer.head.headerFields[.connection] == "close")
    }

    @Test func anEmptyAnswerBelowTheRouterSaysItsLengthAndCloses() {
        let head = ResponseHead(serverName: "PushRelay", clock: ManualClock("1994-11-06T08:49:37Z"))
        let redirect = head.closing(.temporaryRedirect, [.location: "/api/websocket?x=1"], bodyLength: 0)
        #expect(redirect.status == .temporaryRedirect)
        #expect(
            redirect.headerFields == [
                .location: "/api/websocket?x=1", .contentLength: "0", .date: "Sun, 06 Nov 1994 08:49:37 GMT", .server: "PushRelay",
                .connection: "close",
            ]
        )
    }

    @Test func anErrorBelowTheCodecIsTheSameAnswerInHTTP1Bytes() {
        let head = ResponseHead(serverName: "PushRelay", clock: ManualClock("1994-11-06T08:49:37Z"))
        let error = APIError(.requestTimeout, "RequestTimeout", "too slow")
        let bytes = head.closingBytes(error, allocator: ByteBufferAllocator())
        let body = #"{"errorType":"RequestTimeout","message":"too slow"}"#
        #expect(
            String(buffer: bytes)
                == "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: PushRelay\r\nConnection: close\r\n\r\n" + body
        )
    }
}
