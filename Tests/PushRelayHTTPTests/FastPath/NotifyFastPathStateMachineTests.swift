import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PushRelayCore
import PushRelayHTTP
import Testing

@testable import PushRelayServer

/// The fast path's decisions, without a channel.
@Suite struct NotifyFastPathStateMachineTests {
    typealias Machine = NotifyFastPath.StateMachine

    static let notify = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/api/sendPush/android/v1")
    static let health = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/health")
    static func route(_ head: HTTPRequest) -> String? {
        head.path == notify.path && head.method == .post ? notify.path : nil
    }
    static func chunk(_ s: String) -> HTTPRequestPart { .body(ByteBuffer(string: s)) }

    func isNone(_ a: Machine.ReadAction) -> Bool { if case .none = a { return true } else { return false } }
    func isForward(_ a: Machine.ReadAction) -> Bool { if case .forward = a { return true } else { return false } }

    @Test func aNotifyRequestIsCollectedAndAnswered() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        let a8 = m.read(.head(Self.notify), route: Self.route)
        #expect(isNone(a8))
        let a9 = m.read(Self.chunk("{\"a\":"), route: Self.route)
        #expect(isNone(a9))
        let a10 = m.read(Self.chunk("1}"), route: Self.route)
        #expect(isNone(a10))
        guard case .answer(_, let path, let body) = m.read(.end(nil), route: Self.route) else {
            Issue.record("expected an answer")
            return
        }
        #expect(path == "/api/sendPush/android/v1")
        #expect(String(buffer: body) == "{\"a\":1}")
        #expect(m.isAnswering)
        guard case .resume = m.answered(close: false) else {
            Issue.record("expected to resume")
            return
        }
        #expect(m.held.isEmpty)
        #expect(!m.isAnswering)
    }

    @Test func otherRequestsAreForwardedAndCountedUntilTheirResponseEnds() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        let a11 = m.read(.head(Self.health), route: Self.route)
        #expect(isForward(a11))
        let a12 = m.read(.end(nil), route: Self.route)
        #expect(isForward(a12))
        #expect(m.forwarded == 1)
        // A notify request behind an unanswered forwarded one goes to Hummingbird too, to keep responses in order.
        let a13 = m.read(.head(Self.notify), route: Self.route)
        #expect(isForward(a13))
        let a14 = m.read(Self.chunk("{}"), route: Self.route)
        #expect(isForward(a14))
        let a15 = m.read(.end(nil), route: Self.route)
        #expect(isForward(a15))
        #expect(m.forwarded == 2)
        m.forwardedResponseEnded()
        m.forwardedResponseEnded()
        #expect(m.forwarded == 0)
        // Now the fast path takes it.
        let a16 = m.read(.head(Self.notify), route: Self.route)
        #expect(isNone(a16))
    }

    @Test func anOversizedBodyIsDroppedAndRejected() {
        var m = Machine(limit: BodyLimit(maxBytes: 4))
        _ = m.read(.head(Self.notify), route: Self.route)
        let a17 = m.read(Self.chunk("123"), route: Self.route)
        #expect(isNone(a17))
        let a18 = m.read(Self.chunk("456"), route: Self.route)
        #expect(isNone(a18))
        let a19 = m.read(Self.chunk("789"), route: Self.route)
        #expect(isNone(a19))
        guard case .rejectTooLarge(_, let path) = m.read(.end(nil), route: Self.route) else {
            Issue.record("expected a 413")
            return
        }
        #expect(path == "/api/sendPush/android/v1")
        guard case .close = m.answered(close: true) else {
            Issue.record("expected a close")
            return
        }
    }

    @Test func aBodyDeclaredPastTheLimitIsDroppedWithoutCollecting() {
        var m = Machine(limit: BodyLimit(maxBytes: 4))
        var head = Self.notify
        head.headerFields[.contentLength] = "9"
        _ = m.read(.head(head), route: Self.route)
        guard case .discarding = m.state else {
            Issue.record("expected the body to be dropped from the head on, not \(m.state)")
            return
        }
        let a = m.read(Self.chunk("123456789"), route: Self.route)
        #expect(isNone(a))
        guard case .rejectTooLarge(_, let path) = m.read(.end(nil), route: Self.route) else {
            Issue.record("expected a 413")
            return
        }
        #expect(path == "/api/sendPush/android/v1")
    }

    @Test func aBodyAtTheLimitIsCollected() {
        var m = Machine(limit: BodyLimit(maxBytes: 4))
        var head = Self.notify
        head.headerFields[.contentLength] = "4"
        _ = m.read(.head(head), route: Self.route)
        _ = m.read(Self.chunk("12"), route: Self.route)
        _ = m.read(Self.chunk("34"), route: Self.route)
        guard case .answer(_, _, let body) = m.read(.end(nil), route: Self.route) else {
            Issue.record("expected an answer")
            return
        }
        #expect(String(buffer: body) == "1234")
    }

    @Test func partsReadWhileAnsweringAreHeldAndReadingPausesOnlyThen() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        _ = m.read(.head(Self.notify), route: Self.route)
        _ = m.read(.end(nil), route: Self.route)
        // Nothing held yet: reading goes on (the usual case costs no change of read interest).
        let r1 = m.readRequested()
        #expect(r1)
        // A pipelined request arrives while answering: held, and now reading pauses.
        let a20 = m.read(.head(Self.health), route: Self.route)
        #expect(isNone(a20))
        let a21 = m.read(.end(nil), route: Self.route)
        #expect(isNone(a21))
        let r2 = m.readRequested()
        #expect(!r2)
        #expect(m.readPending)
        guard case .resume = m.answered(close: false) else {
            Issue.record("expected to resume")
            return
        }
        #expect(m.held.count == 2)
        // Taken in order, they are forwarded; then the pending read is issued, once.
        while let action = m.nextHeld(route: Self.route) { #expect(isForward(action)) }
        #expect(m.held.isEmpty)
        let r3 = m.takePendingRead()
        #expect(r3)
        let r4 = m.takePendingRead()
        #expect(!r4)
    }

    @Test func aHeldNotifyRequestIsAnsweredAfterTheFirstAndKeepsTheReadPending() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        _ = m.read(.head(Self.notify), route: Self.route)
        _ = m.read(.end(nil), route: Self.route)
        _ = m.read(.head(Self.notify), route: Self.route)
        _ = m.read(Self.chunk("{}"), route: Self.route)
        _ = m.read(.end(nil), route: Self.route)
        _ = m.read(.head(Self.health), route: Self.route)
        let r5 = m.readRequested()
        #expect(!r5)
        guard case .resume = m.answered(close: false) else {
            Issue.record("expected to resume")
            return
        }
        var answers = 0
        while let action = m.nextHeld(route: Self.route) {
            if case .answer = action { answers += 1 }
        }
        #expect(answers == 1)
        // The second answer is under way with the health request held behind it: no read yet.
        #expect(m.isAnswering)
        #expect(m.held.count == 1)
        let r6 = m.takePendingRead()
        #expect(!r6)
        guard case .resume = m.answered(close: false) else {
            Issue.record("expected to resume")
            return
        }
        while let action = m.nextHeld(route: Self.route) { #expect(isForward(action)) }
        #expect(m.held.isEmpty)
        let r7 = m.takePendingRead()
        #expect(r7)
    }

    /// One complete notify request, read.
    static func readNotify(_ m: inout Machine, body: String = "{}") -> Machine.ReadAction {
        _ = m.read(.head(notify), route: route)
        _ = m.read(chunk(body), route: route)
        return m.read(.end(nil), route: route)
    }

    @Test func whileTheChannelIsNotWritableNewRequestsWaitAndReadingPauses() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        // A request answered at once (bad input is), whose answer fills the outbound buffer.
        guard case .answer = Self.readNotify(&m) else {
            Issue.record("expected an answer")
            return
        }
        let w1 = m.writabilityChanged(false)
        #expect(!w1, "nothing waits yet")
        guard case .resume = m.answered(close: false) else {
            Issue.record("expected to resume")
            return
        }
        // Pipelined requests read meanwhile are held, not answered; the next read is held too.
        for _ in 0..<3 {
            let action = Self.readNotify(&m)
            #expect(isNone(action))
        }
        #expect(m.heldRequests == 3)
        #expect(m.held.count == 9)
        let r1 = m.readRequested()
        #expect(!r1)
        let none = m.nextHeld(route: Self.route) == nil
        #expect(none, "nothing is taken while the channel is not writable")
        // Writable again: they are taken in order, one answer at a time.
        let w2 = m.writabilityChanged(true)
        #expect(w2)
        var answers = 0
        while true {
            while let action = m.nextHeld(route: Self.route) {
                if case .answer = action { answers += 1 }
            }
            guard m.isAnswering else { break }
            _ = m.answered(close: false)
        }
        #expect(answers == 3)
        #expect(m.heldRequests == 0)
        let r2 = m.takePendingRead()
        #expect(r2, "the read asked for meanwhile is issued once everything held was taken")
        let r3 = m.readRequested()
        #expect(r3)
    }

    @Test func anAnswerThatFillsTheBufferStopsTheNextHeldRequest() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        _ = Self.readNotify(&m)
        // Two requests wait behind the first answer.
        _ = Self.readNotify(&m)
        _ = Self.readNotify(&m)
        _ = m.readRequested()
        _ = m.answered(close: false)
        // The second is taken and answered; its answer makes the channel not writable: the third waits.
        var answers = 0
        while let action = m.nextHeld(route: Self.route) {
            if case .answer = action { answers += 1 }
        }
        #expect(answers == 1)
        _ = m.writabilityChanged(false)
        _ = m.answered(close: false)
        let next = m.nextHeld(route: Self.route) == nil
        #expect(next)
        #expect(m.heldRequests == 1)
        let r1 = m.takePendingRead()
        #expect(!r1)
    }

    @Test func aRequestBeingReadGoesOnWhileTheChannelIsNotWritable() {
        // Only a new request waits: a body being collected (bounded by the body limit) is read to its end.
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        _ = m.read(.head(Self.notify), route: Self.route)
        _ = m.writabilityChanged(false)
        let a1 = m.read(Self.chunk("{}"), route: Self.route)
        #expect(isNone(a1))
        guard case .answer(_, _, let body) = m.read(.end(nil), route: Self.route) else {
            Issue.record("expected an answer")
            return
        }
        #expect(String(buffer: body) == "{}")
        #expect(m.held.isEmpty)
    }

    @Test func moreWaitingRequestsThanTheBoundCloseTheConnection() {
        var m = Machine(limit: BodyLimit(maxBytes: 100), maxHeldRequests: 4)
        _ = m.writabilityChanged(false)
        for _ in 0..<4 {
            let action = Self.readNotify(&m)
            #expect(isNone(action))
        }
        #expect(m.heldRequests == 4)
        guard case .close = m.read(.head(Self.notify), route: Self.route) else {
            Issue.record("expected the connection to close")
            return
        }
        // Everything held is dropped, and what the decoder still delivers is dropped too; nothing more is read.
        #expect(m.held.isEmpty)
        let after = m.read(.end(nil), route: Self.route)
        #expect(isNone(after))
        #expect(m.held.isEmpty)
        let r1 = m.readRequested()
        #expect(!r1)
        let w = m.writabilityChanged(true)
        #expect(!w)
    }

    @Test func aClosingAnswerDropsWhatIsHeld() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        _ = Self.readNotify(&m)
        _ = Self.readNotify(&m)
        #expect(m.heldRequests == 1)
        guard case .close = m.answered(close: true) else {
            Issue.record("expected a close")
            return
        }
        #expect(m.held.isEmpty)
        let next = m.nextHeld(route: Self.route) == nil
        #expect(next)
    }

    @Test func partsNIOCannotProduceAreProtocolErrors() {
        var m = Machine(limit: BodyLimit(maxBytes: 100))
        if case .protocolError = m.read(Self.chunk("x"), route: Self.route) {} else { Issue.record("a body without a head") }
        _ = m.read(.head(Self.notify), route: Self.route)
        if case .protocolError = m.read(.head(Self.notify), route: Self.route) {} else { Issue.record("a head inside a request") }
    }
}
