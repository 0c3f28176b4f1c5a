import NIOCore
import NIOHTTP1
import Testing

@testable import PushRelayProviders

/// The HTTP/1.1 connection's books without I/O: one exchange at a time, answers complete on their end, keep-alive
/// decides reuse, informational heads are skipped, long bodies are cut, deadlines and closes fail the waiter.
@Suite struct UpstreamHTTP1StateMachineTests {
    typealias Machine = UpstreamHTTP1StateMachine<Int>
    let now = ContinuousClock.now

    func head(_ status: HTTPResponseStatus, version: HTTPVersion = .http1_1, _ headers: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(version: version, status: status, headers: HTTPHeaders(headers))
    }

    func started(_ machine: inout Machine, waiter: Int = 1) {
        #expect(machine.start(waiter, deadline: now + .seconds(5), now: now) == nil)
    }

    @Test func aKeptAliveAnswerCompletesTheWaiterAndTheConnectionTakesTheNext() {
        var machine = Machine()
        started(&machine)
        #expect(machine.start(2, deadline: now + .seconds(5), now: now) == .notProcessed, "one exchange at a time")
        guard case .none = machine.receivedHead(head(.badRequest, [("x-a", "b")])) else {
            Issue.record("head")
            return
        }
        guard case .none = machine.receivedBody(ByteBuffer(string: "{\"e\":")) else {
            Issue.record("body")
            return
        }
        guard case .none = machine.receivedBody(ByteBuffer(string: "1}")) else {
            Issue.record("body")
            return
        }
        guard case .succeed(1, let response, close: false) = machine.receivedEnd() else {
            Issue.record("end")
            return
        }
        #expect(response.status == 400)
        #expect(response.header("x-a") == "b")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"e\":1}")
        #expect(machine.isIdle)
        started(&machine, waiter: 2)
    }

    @Test(arguments: [
        (HTTPVersion.http1_1, [("connection", "close")]),
        (HTTPVersion.http1_0, []),
    ])
    func anAnswerThatEndsTheConnectionClosesIt(version: HTTPVersion, headers: [(String, String)]) {
        var machine = Machine()
        started(&machine)
        _ = machine.receivedHead(head(.ok, version: version, headers))
        guard case .succeed(1, _, close: true) = machine.receivedEnd() else {
            Issue.record("expected close")
            return
        }
        #expect(!machine.isIdle)
        #expect(machine.start(2, deadline: now + .seconds(5), now: now) == .notProcessed)
    }

    @Test func informationalHeadsAreSkipped() {
        var machine = Machine()
        started(&machine)
        _ = machine.receivedHead(head(.continue))
        guard case .none = machine.receivedEnd() else {
            Issue.record("the 100's end completes nothing")
            return
        }
        _ = machine.receivedHead(head(.created))
        guard case .succeed(1, let response, close: false) = machine.receivedEnd() else {
            Issue.record("end")
            return
        }
        #expect(response.status == 201)
    }

    @Test func aLongBodyIsCutAndTheConnectionCloses() {
        var machine = Machine(maxBodyBytes: 8)
        started(&machine)
        _ = machine.receivedHead(head(.ok))
        guard case .none = machine.receivedBody(ByteBuffer(string: "12345")) else {
            Issue.record("short so far")
            return
        }
        guard case .succeed(1, let response, close: true) = machine.receivedBody(ByteBuffer(string: "67890")) else {
            Issue.record("cut")
            return
        }
        #expect(String(decoding: response.body, as: UTF8.self) == "12345678")
        guard case .close = machine.receivedEnd() else {
            Issue.record("the rest belongs to no request")
            return
        }
    }

    @Test func theDeadlineFailsTheWaiterAndClosesTheConnection() {
        var machine = Machine()
        #expect(machine.start(1, deadline: now, now: now) == .timedOut, "a request already late is not sent")
        started(&machine)
        guard case .none = machine.expire(now: now + .seconds(4)) else {
            Issue.record("not yet")
            return
        }
        guard case .fail(1, .timedOut, close: true) = machine.expire(now: now + .seconds(5)) else {
            Issue.record("expired")
            return
        }
        guard case .none = machine.closed() else {
            Issue.record("nothing left to fail")
            return
        }
    }

    @Test func aCloseFailsTheWaitingRequest() {
        var machine = Machine()
        started(&machine)
        _ = machine.receivedHead(head(.ok))
        guard case .fail(1, .connectionClosed, close: false) = machine.closed() else {
            Issue.record("closed")
            return
        }
        #expect(machine.start(2, deadline: now + .seconds(5), now: now) == .notProcessed)
    }

    @Test func anAnswerNobodyAskedForClosesTheConnection() {
        var machine = Machine()
        guard case .close = machine.receivedHead(head(.ok)) else {
            Issue.record("unsolicited")
            return
        }
    }

    @Test func anEndWithoutAHeadFailsTheWaiter() {
        var machine = Machine()
        started(&machine)
        guard case .fail(1, .connectionClosed, close: true) = machine.receivedEnd() else {
            Issue.record("no head")
            return
        }
    }
}
