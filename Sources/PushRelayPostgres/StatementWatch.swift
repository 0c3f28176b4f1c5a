import NIOCore
import PostgresNIO
import PushRelayCore
import PushRelayEventLoopClock
import Synchronization

/// Watches one running statement from its connection's event loop, once an `interval` on `clock`: when the connection
/// has closed under it, or its limit has passed, `giveUp` is told at once (and the watch ends). `stop()` ends it when
/// the statement ends; almost every statement ends before the first look, so a watch usually costs one event-loop
/// timer set and cancelled.
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
        var timer: ScheduledTimer?
        var stopped = false
    }

    /// How often a statement is looked at.
    static let defaultInterval = Duration.seconds(1)

    private let state = Mutex(State())
    private let connection: PostgresConnection
    private let limit: (duration: Duration, deadline: ContinuousClock.Instant)?
    private let interval: Duration
    private let clock: any TimePort
    private let giveUp: @Sendable (Verdict) -> Void

    /// Starts watching. `limit` nil: no limit, only the connection is watched.
    init(
        connection: PostgresConnection,
        limit: Duration?,
        interval: Duration = StatementWatch.defaultInterval,
        clock: any TimePort,
        giveUp: @escaping @Sendable (Verdict) -> Void
    ) {
        self.connection = connection
        self.limit = limit.map { ($0, clock.instant + $0) }
        self.interval = interval
        self.clock = clock
        self.giveUp = giveUp
        arm()
    }

    /// Ends the watch (the statement ended).
    func stop() {
        let timer = state.withLock { s -> ScheduledTimer? in
            s.stopped = true
            defer { s.timer = nil }
            return s.timer
        }
        timer?.cancel()
    }

    private func arm() {
        var delay = interval
        if let limit { delay = min(delay, clock.instant.duration(to: limit.deadline)) }
        state.withLock { s in
            guard !s.stopped else { return }
            s.timer = clock.schedule(after: delay, on: connection.eventLoop) { self.look() }
        }
    }

    private func look() {
        if connection.isClosed {
            giveUp(.connectionClosed)
        } else if let limit, clock.instant >= limit.deadline {
            giveUp(.limitPassed(limit.duration))
        } else {
            arm()
        }
    }
}
