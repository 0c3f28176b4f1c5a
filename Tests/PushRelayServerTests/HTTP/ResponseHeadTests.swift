import HTTPTypes
import PushRelayCore
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// Every answer's common head fields: `Date` on the server's time port, `Server`, and `Connection: close` exactly when
/// the connection ends after the answer.
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
}
