import NIOCore
import NIOHTTP1

/// The bookkeeping of one client HTTP/1.1 connection to a provider, without I/O: the one request waiting for its
/// answer, the answer gathered so far, whether the connection may carry another request afterwards, and whether the
/// request's deadline has passed.
///
/// A connection carries one exchange at a time (no pipelining: a slow answer must not hold up the requests queued
/// behind it). `Waiter` is whatever the caller completes with the answer (a promise in `UpstreamHTTP1Handler`, a number
/// in the tests). Every method returns what the caller must do; none of them writes or completes anything itself.
struct UpstreamHTTP1StateMachine<Waiter> {
    typealias Failure = UpstreamStreamFailure

    /// What to do after an event.
    enum Action {
        case none
        /// Complete the waiter with the answer; close the connection when `close` is set, else it takes the next
        /// request.
        case succeed(Waiter, UpstreamResponse, close: Bool)
        /// Fail the waiter; close the connection when `close` is set.
        case fail(Waiter, Failure, close: Bool)
        /// Close the connection: the server sent something no request asked for.
        case close
    }

    enum State {
        /// No request on the connection: it takes one.
        case idle
        /// A request was sent; its answer is not complete.
        case waiting(Exchange)
        /// The connection is closed or closing: it takes no request.
        case closed
    }

    struct Exchange {
        var waiter: Waiter
        var deadline: ContinuousClock.Instant
        /// Nil until the final (non-`1xx`) head arrived.
        var head: HTTPResponseHead?
        /// An informational `1xx` head arrived and its end has not: the final head is still to come.
        var informational = false
        var body: [UInt8] = []
    }

    /// Answers longer than this are cut here and the connection closed (provider error bodies are a few hundred bytes).
    let maxBodyBytes: Int

    private(set) var state = State.idle

    init(maxBodyBytes: Int = UpstreamResponse.maxBodyBytes) {
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether a request may start now.
    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Starts a request: nil when the caller may send it, or the reason it cannot be sent on this connection.
    mutating func start(_ waiter: Waiter, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Failure? {
        guard case .idle = state else { return .notProcessed }
        guard deadline > now else { return .timedOut }
        state = .waiting(Exchange(waiter: waiter, deadline: deadline))
        return nil
    }

    /// A response head. Informational heads (`1xx`, except `101`, which is never asked for) are skipped.
    mutating func receivedHead(_ head: HTTPResponseHead) -> Action {
        guard case .waiting(var exchange) = state else {
            state = .closed
            return .close
        }
        if (100..<200).contains(head.status.code), head.status != .switchingProtocols {
            exchange.informational = true
        } else {
            exchange.head = head
        }
        state = .waiting(exchange)
        return .none
    }

    /// A piece of the answer's body.
    mutating func receivedBody(_ bytes: ByteBuffer) -> Action {
        guard case .waiting(var exchange) = state else {
            state = .closed
            return .close
        }
        guard let head = exchange.head else { return .none }
        let room = maxBodyBytes - exchange.body.count
        exchange.body += bytes.readableBytesView.prefix(room)
        if exchange.body.count >= maxBodyBytes {
            // Longer than is kept: take what arrived; the rest would have to be read, so the connection goes.
            state = .closed
            return .succeed(exchange.waiter, Self.response(head, exchange.body), close: true)
        }
        state = .waiting(exchange)
        return .none
    }

    /// The end of a message: the answer is complete (or an informational one is over).
    mutating func receivedEnd() -> Action {
        guard case .waiting(var exchange) = state else {
            state = .closed
            return .close
        }
        guard let head = exchange.head else {
            if exchange.informational {
                exchange.informational = false
                state = .waiting(exchange)
                return .none
            }
            state = .closed
            return .fail(exchange.waiter, .connectionClosed, close: true)
        }
        let reusable = head.isKeepAlive && head.status != .switchingProtocols
        state = reusable ? .idle : .closed
        return .succeed(exchange.waiter, Self.response(head, exchange.body), close: !reusable)
    }

    /// The request's deadline has passed at `now`: it fails and the connection closes (HTTP/1.1 cannot cancel an
    /// exchange in flight).
    mutating func expire(now: ContinuousClock.Instant) -> Action {
        guard case .waiting(let exchange) = state, exchange.deadline <= now else { return .none }
        state = .closed
        return .fail(exchange.waiter, .timedOut, close: true)
    }

    /// The connection closed or failed: the request still waiting, if any, fails.
    mutating func closed() -> Action {
        defer { state = .closed }
        guard case .waiting(let exchange) = state else { return .none }
        return .fail(exchange.waiter, .connectionClosed, close: false)
    }

    private static func response(_ head: HTTPResponseHead, _ body: [UInt8]) -> UpstreamResponse {
        UpstreamResponse(status: Int(head.status.code), headers: head.headers, body: body)
    }
}
