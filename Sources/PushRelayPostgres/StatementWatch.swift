import NIOCore
import PostgresNIO
import Synchronization

/// Watches one running statement from its connection's event loop, once a `interval`: when the connection has closed
/// under it, or its limit has passed, `giveUp` is told at once (and the watch ends). `stop()` ends it when the
/// statement ends; almost every statement ends before the first look, so a watch usually costs one event-loop timer
/// set and cancelled.
///
/// Why: a statement written to a connection that has just closed is never answered (postgres-nio drops the failed
/// write), and the pool can hand out a connection whose close it has not seen yet. Without the watch such a request
/// would wait for its whole limit, or for ever without one.
final class StatementWatch: Sendable {
    enum Verdict: Sendable {
        case connectionClosed
        /// The statement's limit (as given) passed.
        case limitPassed(Duration)
    }

    private struct State {
        var timer: Scheduled<Void>?
        var stopped = false
    }

    private let state = Mutex(State())
    private let connection: PostgresConnection
    private let limit: (duration: Duration, deadline: NIODeadline)?
    private let interval: TimeAmount
    private let giveUp: @Sendable (Verdict) -> Void

    /// Starts watching. `limit` nil: no limit, only the connection is watched.
    init(
        connection: PostgresConnection,
        limit: Duration?,
        interval: TimeAmount = .seconds(1),
        giveUp: @escaping @Sendable (Verdict) -> Void
    ) {
        self.connection = connection
        self.limit = limit.map { ($0, NIODeadline.now() + TimeAmount($0)) }
        self.interval = interval
        self.giveUp = giveUp
        arm()
    }

    /// Ends the watch (the statement ended).
    func stop() {
        let timer = state.withLock { s -> Scheduled<Void>? in
            s.stopped = true
            defer { s.timer = nil }
            return s.timer
        }
        timer?.cancel()
    }

    private func arm() {
        var next = NIODeadline.now() + interval
        if let limit, limit.deadline < next { next = limit.deadline }
        state.withLock { s in
            guard !s.stopped else { return }
            s.timer = connection.eventLoop.scheduleTask(deadline: next) { self.look() }
        }
    }

    private func look() {
        if connection.isClosed {
            giveUp(.connectionClosed)
        } else if let limit, NIODeadline.now() >= limit.deadline {
            giveUp(.limitPassed(limit.duration))
        } else {
            arm()
        }
    }
}
