import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import PushRelayProviders

/// The books of one upstream HTTP/2 connection, event by event (waiters are numbers).
@Suite struct UpstreamHTTP2StateMachineTests {
    typealias Machine = UpstreamHTTP2StateMachine<Int>

    let now = ContinuousClock.now
    var later: ContinuousClock.Instant { now + .seconds(10) }

    static func head(_ status: Int, _ extra: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders([(":status", String(status))] + extra)
    }

    static func buffer(_ s: String) -> ByteBuffer { ByteBuffer(string: s) }

    func started(_ machine: inout Machine, _ waiter: Int) throws -> HTTP2StreamID {
        try machine.start(waiter, deadline: later, now: now).get()
    }

    /// Asks the liveness rule on every 25 ms tick from `from` (exclusive) to `to` (inclusive), as the handler does;
    /// returns the first action that is not `.none`, or `.none`.
    func ticks(_ m: inout Machine, from: Duration, to: Duration) -> Machine.LivenessAction {
        var t = from
        while t < to {
            t = min(t + .milliseconds(25), to)
            let action = m.checkLiveness(now: now + t, pingAfter: .seconds(1), pingTimeout: .seconds(2))
            if action != .none { return action }
        }
        return .none
    }

    @Test func silenceWithRequestsWaitingIsPingedThenDead() throws {
        var m = Machine()
        let second = Duration.seconds(1)
        #expect(m.checkLiveness(now: now + .seconds(60), pingAfter: second, pingTimeout: second * 2) == .none, "idle: never judged")
        _ = try started(&m, 1)
        #expect(m.checkLiveness(now: now + .milliseconds(999), pingAfter: second, pingTimeout: second * 2) == .none)
        #expect(m.checkLiveness(now: now + second, pingAfter: second, pingTimeout: second * 2) == .ping)
        #expect(ticks(&m, from: second, to: .milliseconds(2975)) == .none, "one PING at a time")
        #expect(ticks(&m, from: .milliseconds(2975), to: .seconds(3)) == .dead)
        let failed = m.closed(.connectionDead)
        #expect(failed.map(\.0) == [1] && failed.map(\.1) == [.connectionDead])
        #expect(m.checkLiveness(now: now + .seconds(9), pingAfter: second, pingTimeout: second * 2) == .none)
    }

    @Test func aStallOfThisProcessIsNotCountedAgainstTheServer() throws {
        var m = Machine()
        _ = try started(&m, 1)
        #expect(m.checkLiveness(now: now + .seconds(1), pingAfter: .seconds(1), pingTimeout: .seconds(2)) == .ping)
        // The next check comes 5 s late: the process had no CPU, and the PING's answer may be waiting unread.
        #expect(m.checkLiveness(now: now + .seconds(6), pingAfter: .seconds(1), pingTimeout: .seconds(2)) == .none)
        m.heard(now: now + .milliseconds(6010))
        #expect(ticks(&m, from: .seconds(6), to: .milliseconds(6500)) == .none, "answered: alive")
        #expect(m.openStreams == 1)
        // Without an answer, 2 s of checks on time still give it up.
        #expect(ticks(&m, from: .milliseconds(6500), to: .milliseconds(7100)) == .ping)
        #expect(ticks(&m, from: .milliseconds(7100), to: .milliseconds(9000)) == .none)
        #expect(ticks(&m, from: .milliseconds(9000), to: .seconds(10)) == .dead)
    }

    @Test func anythingHeardAfterThePingKeepsTheConnection() throws {
        var m = Machine()
        let second = Duration.seconds(1)
        _ = try started(&m, 1)
        #expect(m.checkLiveness(now: now + second, pingAfter: second, pingTimeout: second * 2) == .ping)
        m.heard(now: now + .milliseconds(1500))
        #expect(m.checkLiveness(now: now + .seconds(2), pingAfter: second, pingTimeout: second * 2) == .none)
        // Silent again for a second: another PING, not a verdict.
        #expect(m.checkLiveness(now: now + .milliseconds(2500), pingAfter: second, pingTimeout: second * 2) == .ping)
    }

    @Test func streamsTakeOddIncreasingIDsAndAnswersCompleteTheirWaiter() throws {
        var m = Machine()
        let a = try started(&m, 1)
        let b = try started(&m, 2)
        #expect(a == 1 && b == 3)
        #expect(m.openStreams == 2)

        guard case .none = m.receivedHeaders(streamID: b, headers: Self.head(200, [("apns-id", "x")]), endStream: false) else {
            Issue.record("a head without END_STREAM completes nothing")
            return
        }
        let (action, update) = m.receivedData(streamID: b, bytes: Self.buffer("{}"), endStream: true)
        guard case .succeed(let waiter, let response) = action else {
            Issue.record("expected the answer, got \(action)")
            return
        }
        #expect(waiter == 2 && response.status == 200 && response.header("apns-id") == "x" && response.body == Array("{}".utf8))
        #expect(update == 0)
        #expect(m.openStreams == 1)

        guard case .succeed(1, let empty) = m.receivedHeaders(streamID: a, headers: Self.head(410), endStream: true) else {
            Issue.record("a head with END_STREAM is a whole answer")
            return
        }
        #expect(empty.status == 410 && empty.body.isEmpty)
        #expect(m.openStreams == 0)
    }

    @Test func informationalHeadsAreSkipped() throws {
        var m = Machine()
        let id = try started(&m, 7)
        guard case .none = m.receivedHeaders(streamID: id, headers: Self.head(100), endStream: false) else {
            Issue.record("100 Continue is not the answer")
            return
        }
        guard case .succeed(7, let r) = m.receivedHeaders(streamID: id, headers: Self.head(200), endStream: true) else {
            Issue.record("the final head is the answer")
            return
        }
        #expect(r.status == 200)
    }

    @Test func goAwayFailsOnlyTheStreamsItDidNotProcessAndStopsNewOnes() throws {
        var m = Machine()
        let first = try started(&m, 1)
        let second = try started(&m, 2)
        _ = try started(&m, 3)
        m.sent(streamID: first)
        m.sent(streamID: second)
        let failed = m.receivedGoAway(lastStreamID: first)
        #expect(Set(failed.map(\.0)) == [2, 3])
        // Stream 2 reached the server, which did not process it; stream 3 was still held under the stream cap.
        #expect(failed.first { $0.0 == 2 }?.1 == .aboveGoAway)
        #expect(failed.first { $0.0 == 3 }?.1 == .notSent)
        #expect(m.state == .draining(lastStreamID: first))
        #expect(m.start(9, deadline: later, now: now) == .failure(.notSent))
        guard case .succeed(1, _) = m.receivedHeaders(streamID: first, headers: Self.head(200), endStream: true) else {
            Issue.record("a stream at or below the last stream ID still gets its answer")
            return
        }
    }

    @Test func aSecondGoAwayCanLowerTheLastStreamIDButNotRaiseIt() throws {
        var m = Machine()
        let ids = try (1...4).map { try started(&m, $0) }
        for id in ids { m.sent(streamID: id) }
        #expect(m.receivedGoAway(lastStreamID: ids[2]).map(\.0) == [4])
        // nghttp2's close() sends a second GOAWAY; a higher last id there changes nothing.
        #expect(m.receivedGoAway(lastStreamID: ids[3]).isEmpty)
        #expect(m.state == .draining(lastStreamID: ids[2]))
        let lowered = m.receivedGoAway(lastStreamID: ids[0])
        #expect(Set(lowered.map(\.0)) == [2, 3] && lowered.allSatisfy { $0.1 == .aboveGoAway })
        #expect(m.state == .draining(lastStreamID: ids[0]))
    }

    @Test func aFrameTheHTTP2LayerRefusedFailsItsStream() throws {
        var m = Machine()
        let a = try started(&m, 1)
        let b = try started(&m, 2)
        m.sent(streamID: a)
        // HEADERS refused: the request never left.
        guard case .fail(2, .notSent) = m.refusedWrite(streamID: b, headers: true) else {
            Issue.record("a refused HEADERS frame means not sent")
            return
        }
        // DATA refused after its HEADERS went: the server holds a request without its body; the stream is reset.
        guard case .failAndReset(1, .reset, a) = m.refusedWrite(streamID: a, headers: false) else {
            Issue.record("a refused DATA frame resets its stream")
            return
        }
        guard case .none = m.refusedWrite(streamID: a, headers: true) else {
            Issue.record("a stream already failed is left alone")
            return
        }
        #expect(m.openStreams == 0)
    }

    @Test func resetsFailTheirStreamAndRefusedStreamsMaySendAgain() throws {
        var m = Machine()
        let a = try started(&m, 1)
        let b = try started(&m, 2)
        guard case .fail(1, .notProcessed) = m.receivedReset(streamID: a, code: .refusedStream) else {
            Issue.record("REFUSED_STREAM means not processed")
            return
        }
        guard case .fail(2, .reset(let code)) = m.receivedReset(streamID: b, code: .internalError) else {
            Issue.record("other resets carry their code")
            return
        }
        #expect(code == Int(HTTP2ErrorCode.internalError.networkCode))
        guard case .none = m.receivedReset(streamID: b, code: .cancel) else {
            Issue.record("a reset of a finished stream is ignored")
            return
        }
    }

    @Test func deadlinesExpireAndPastDeadlinesDoNotStart() throws {
        var m = Machine()
        _ = try m.start(1, deadline: now + .milliseconds(100), now: now).get()
        let late = try m.start(2, deadline: now + .seconds(5), now: now).get()
        #expect(m.expire(now: now + .milliseconds(99)).isEmpty)
        let expired = m.expire(now: now + .milliseconds(100))
        #expect(expired.map(\.0) == [1] && expired.map(\.1) == [1])
        #expect(m.openStreams == 1)
        #expect(late == 3)
        #expect(m.start(3, deadline: now, now: now) == .failure(.timedOut))
    }

    @Test func aClosedConnectionFailsEveryWaiter() throws {
        var m = Machine()
        _ = try started(&m, 1)
        _ = try started(&m, 2)
        let failed = m.closed()
        #expect(Set(failed.map(\.0)) == [1, 2] && failed.allSatisfy { $0.1 == .connectionClosed })
        #expect(m.state == .closed)
        #expect(m.start(3, deadline: later, now: now) == .failure(.notSent))
    }

    @Test func readBytesAreHandedBackToTheConnectionWindowInBatches() throws {
        var m = Machine(maxBodyBytes: 1 << 20, windowUpdateThreshold: 10)
        let id = try started(&m, 1)
        _ = m.receivedHeaders(streamID: id, headers: Self.head(200), endStream: false)
        #expect(m.receivedData(streamID: id, bytes: Self.buffer("123456"), endStream: false).windowUpdate == 0)
        #expect(m.receivedData(streamID: id, bytes: Self.buffer("123456"), endStream: false).windowUpdate == 12)
        // Bytes for streams that are gone still count against the connection window.
        #expect(m.receivedData(streamID: 99, bytes: Self.buffer("1234567890"), endStream: false).windowUpdate == 10)
    }

    @Test func longAnswersAreCutAndTheirStreamReset() throws {
        var m = Machine(maxBodyBytes: 4)
        let id = try started(&m, 1)
        _ = m.receivedHeaders(streamID: id, headers: Self.head(500), endStream: false)
        let (action, _) = m.receivedData(streamID: id, bytes: Self.buffer("abcdef"), endStream: false)
        guard case .succeedAndReset(1, let r, let reset) = action else {
            Issue.record("expected the cut answer and a reset, got \(action)")
            return
        }
        #expect(r.status == 500 && r.body == Array("abcd".utf8) && reset == id)
    }

    @Test func anAnswerWithoutAStatusIsAProtocolError() throws {
        var m = Machine()
        let id = try started(&m, 1)
        guard case .failAndReset(1, .reset, id) = m.receivedHeaders(streamID: id, headers: HPACKHeaders([("x", "y")]), endStream: false) else {
            Issue.record("a head without :status is refused")
            return
        }
    }
}
