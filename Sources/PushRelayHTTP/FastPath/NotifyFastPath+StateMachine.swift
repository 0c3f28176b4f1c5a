import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PushRelayCore

extension NotifyFastPath {
    /// The fast path's decisions for one connection, with no channel in it: each event returns what the handler must
    /// do. Requests the fast path does not take are forwarded to Hummingbird in order, and a request is taken only
    /// when every forwarded one has been answered, so responses stay in request order.
    ///
    /// Back-pressure: a client that sends and does not read must not make the server hold its answers. While the
    /// channel is not writable (its outbound buffer is past NIO's high watermark) no new request is started and no
    /// read is issued; the parts already read wait, in order, and are taken once it is writable again. So the answers
    /// the server holds for a connection are at most the watermark plus one answer, and the parts it holds are what one
    /// read brought. A client that has more than `maxHeldRequests` requests waiting is pipelining POSTs, which no HTTP
    /// client does (RFC 9112 §9.3.2): its connection is closed.
    package struct StateMachine {
        package enum State {
            /// Between requests.
            case idle
            /// Inside a request forwarded to Hummingbird, until its end.
            case forwarding
            /// Reading the body of a request the fast path takes, to the route at `path`.
            case collecting(HTTPRequest, path: String, body: ByteBuffer)
            /// The body passes the limit (`BodyLimit`): the rest is read and dropped, then the answer is a 413.
            case discarding(HTTPRequest, path: String)
            /// The answer is being prepared; parts read meanwhile are held until it is written.
            case answering
            /// The connection is being closed: what is read is dropped.
            case closed
        }

        /// What to do with a part that was read.
        package enum ReadAction {
            /// Pass it on to Hummingbird.
            case forward(HTTPRequestPart)
            /// Nothing now (a body chunk kept or dropped, a part held).
            case none
            /// The request to the route at `path` is complete: answer it.
            case answer(HTTPRequest, path: String, body: ByteBuffer)
            /// The body was too large: answer the path's 413 (`BodyLimit.tooLarge`), which closes the connection.
            case rejectTooLarge(HTTPRequest, path: String)
            /// More than `maxHeldRequests` requests wait: close the connection, answering nothing more.
            case close
            /// A part NIO's decoder cannot produce in this state.
            case protocolError
        }

        /// What to do once an answer was written.
        package enum AnsweredAction {
            /// Close the connection (the answer ends it: `ResponseHead`).
            case close
            /// Take the held parts (`nextHeld`), then issue a read if `takePendingRead` says so.
            case resume
        }

        /// The most requests held waiting on one connection (see the type's description).
        package static let defaultMaxHeldRequests = 64

        package private(set) var state = State.idle
        /// Requests forwarded to Hummingbird whose response has not ended.
        package private(set) var forwarded = 0
        /// A read was asked for while reading was paused: issue it once the parts held are taken.
        package private(set) var readPending = false
        /// Whether the channel takes writes (NIO's writability).
        package private(set) var writable = true
        /// Parts read that could not be taken yet, in the order they came.
        package private(set) var held = CircularBuffer<HTTPRequestPart>()
        /// The request heads among `held`.
        package private(set) var heldRequests = 0
        package let limit: BodyLimit
        package let maxHeldRequests: Int

        package init(limit: BodyLimit, maxHeldRequests: Int = Self.defaultMaxHeldRequests) {
            self.limit = limit
            self.maxHeldRequests = maxHeldRequests
        }

        package var isAnswering: Bool {
            if case .answering = state { return true }
            return false
        }

        /// A part was read; `route` gives the path of a request the fast path takes, nil for one it passes on.
        package mutating func read(_ part: HTTPRequestPart, route: (HTTPRequest) -> String?) -> ReadAction {
            if case .closed = state { return .none }
            guard held.isEmpty, !mustWait(part) else {
                if case .head = part {
                    guard heldRequests < maxHeldRequests else {
                        state = .closed
                        dropHeld()
                        return .close
                    }
                    heldRequests += 1
                }
                held.append(part)
                return .none
            }
            return take(part, route: route)
        }

        /// The next held part, taken, if it may be taken now; nil when none is held or the next must wait on.
        package mutating func nextHeld(route: (HTTPRequest) -> String?) -> ReadAction? {
            guard case .some(let part) = held.first, !mustWait(part) else { return nil }
            held.removeFirst()
            if case .head = part { heldRequests -= 1 }
            return take(part, route: route)
        }

        /// Whether `part` must wait now: behind an answer being prepared, or, as a new request, while the channel is
        /// not writable.
        private func mustWait(_ part: HTTPRequestPart) -> Bool {
            switch (state, part) {
            case (.answering, _): return true
            case (.idle, .head): return !writable
            default: return false
            }
        }

        private mutating func take(_ part: HTTPRequestPart, route: (HTTPRequest) -> String?) -> ReadAction {
            switch (state, part) {
            case (.answering, _), (.closed, _):
                preconditionFailure("parts wait while answering, and are dropped once closed")
            case (.idle, .head(let head)):
                if forwarded == 0, let path = route(head) {
                    state =
                        limit.declaresTooMuch(head.headerFields) ? .discarding(head, path: path) : .collecting(head, path: path, body: ByteBuffer())
                    return .none
                }
                state = .forwarding
                forwarded += 1
                return .forward(part)
            case (.idle, .body), (.idle, .end):
                return .protocolError
            case (.forwarding, .head):
                return .protocolError
            case (.forwarding, .body):
                return .forward(part)
            case (.forwarding, .end):
                state = .idle
                return .forward(part)
            case (.collecting(let head, let path, var body), .body(var chunk)):
                if limit.allows(body.readableBytes + chunk.readableBytes) {
                    state = .idle  // drop the state's reference, so the append does not copy the buffer
                    body.writeBuffer(&chunk)
                    state = .collecting(head, path: path, body: body)
                } else {
                    state = .discarding(head, path: path)
                }
                return .none
            case (.collecting(let head, let path, let body), .end):
                state = .answering
                return .answer(head, path: path, body: body)
            case (.discarding, .body):
                return .none
            case (.discarding(let head, let path), .end):
                state = .answering
                return .rejectTooLarge(head, path: path)
            case (.collecting, .head), (.discarding, .head):
                return .protocolError
            }
        }

        /// Hummingbird's response to a forwarded request ended.
        package mutating func forwardedResponseEnded() {
            forwarded = max(forwarded - 1, 0)
        }

        /// The channel asks to read. Returns whether to read now: reading pauses while parts wait or the channel is not
        /// writable (Home Assistant sends one request at a time, so its usual answer changes nothing).
        package mutating func readRequested() -> Bool {
            if case .closed = state { return false }
            if !held.isEmpty || !writable {
                readPending = true
                return false
            }
            return true
        }

        /// The channel's writability changed. Returns whether to take the held parts (`nextHeld`) and then the pending
        /// read (`takePendingRead`).
        package mutating func writabilityChanged(_ isWritable: Bool) -> Bool {
            writable = isWritable
            if case .closed = state { return false }
            return isWritable && (!held.isEmpty || readPending)
        }

        /// The answer was written.
        package mutating func answered(close: Bool) -> AnsweredAction {
            if close {
                state = .closed
                dropHeld()
                return .close
            }
            if case .answering = state { state = .idle }
            return .resume
        }

        /// After the held parts were taken: whether to issue the read asked for meanwhile.
        package mutating func takePendingRead() -> Bool {
            guard readPending, held.isEmpty, writable, !isAnswering else { return false }
            if case .closed = state { return false }
            readPending = false
            return true
        }

        private mutating func dropHeld() {
            held.removeAll()
            heldRequests = 0
            readPending = false
        }
    }
}
