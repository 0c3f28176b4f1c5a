import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PushRelayCore

extension NotifyFastPath {
    /// The fast path's decisions for one connection, with no channel in it: each event returns what the handler must
    /// do. Requests the fast path does not take are forwarded to Hummingbird in order, and a request is taken only
    /// when every forwarded one has been answered, so responses stay in request order.
    struct StateMachine {
        enum State {
            /// Between requests.
            case idle
            /// Inside a request forwarded to Hummingbird, until its end.
            case forwarding
            /// Reading the body of a request the fast path takes, to the route at `path`.
            case collecting(HTTPRequest, path: String, body: ByteBuffer)
            /// The body passes the limit (`BodyLimit`): the rest is read and dropped, then the answer is a 413.
            case discarding(HTTPRequest, path: String)
            /// The answer is being prepared; parts read meanwhile are held until it is written.
            case answering(held: [HTTPRequestPart])
        }

        /// What to do with a part that was read.
        enum ReadAction {
            /// Pass it on to Hummingbird.
            case forward(HTTPRequestPart)
            /// Nothing now (a body chunk kept or dropped, a part held).
            case none
            /// The request to the route at `path` is complete: answer it.
            case answer(HTTPRequest, path: String, body: ByteBuffer)
            /// The body was too large: answer the path's 413 (`BodyLimit.tooLarge`), which closes the connection.
            case rejectTooLarge(HTTPRequest, path: String)
            /// A part NIO's decoder cannot produce in this state.
            case protocolError
        }

        /// What to do once an answer was written.
        enum AnsweredAction {
            /// Close the connection (the answer ends it: `ResponseHead`).
            case close
            /// Feed `held` back through `read`, in order, then issue a read if `read` is true and nothing is being
            /// answered again.
            case resume(held: [HTTPRequestPart])
        }

        private(set) var state = State.idle
        /// Requests forwarded to Hummingbird whose response has not ended.
        private(set) var forwarded = 0
        /// A read was asked for while parts were held: issue it once the answer is written.
        private(set) var readPending = false
        let limit: BodyLimit

        init(limit: BodyLimit) {
            self.limit = limit
        }

        var isAnswering: Bool {
            if case .answering = state { return true }
            return false
        }

        /// A part was read; `route` gives the path of a request the fast path takes, nil for one it passes on.
        mutating func read(_ part: HTTPRequestPart, route: (HTTPRequest) -> String?) -> ReadAction {
            switch (state, part) {
            case (.answering(var held), _):
                state = .idle  // drop the state's reference, so the append does not copy the array
                held.append(part)
                state = .answering(held: held)
                return .none
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
                    state = .idle  // as above: no copy of the buffer
                    body.writeBuffer(&chunk)
                    state = .collecting(head, path: path, body: body)
                } else {
                    state = .discarding(head, path: path)
                }
                return .none
            case (.collecting(let head, let path, let body), .end):
                state = .answering(held: [])
                return .answer(head, path: path, body: body)
            case (.discarding, .body):
                return .none
            case (.discarding(let head, let path), .end):
                state = .answering(held: [])
                return .rejectTooLarge(head, path: path)
            case (.collecting, .head), (.discarding, .head):
                return .protocolError
            }
        }

        /// Hummingbird's response to a forwarded request ended.
        mutating func forwardedResponseEnded() {
            forwarded = max(forwarded - 1, 0)
        }

        /// The channel asks to read. Returns whether to read now: reading pauses only once a pipelined request waits
        /// behind an answer (Home Assistant sends one request at a time, so the usual answer changes nothing).
        mutating func readRequested() -> Bool {
            if case .answering(let held) = state, !held.isEmpty {
                readPending = true
                return false
            }
            return true
        }

        /// The answer was written.
        mutating func answered(close: Bool) -> AnsweredAction {
            guard case .answering(let held) = state else { return close ? .close : .resume(held: []) }
            state = .idle
            return close ? .close : .resume(held: held)
        }

        /// After the held parts were fed back: whether to issue the read asked for meanwhile.
        mutating func takePendingRead() -> Bool {
            guard readPending, !isAnswering else { return false }
            readPending = false
            return true
        }
    }
}
