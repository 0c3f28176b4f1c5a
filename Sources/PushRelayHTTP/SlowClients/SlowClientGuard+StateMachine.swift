extension SlowClientGuard {
    /// When a plain HTTP connection has had enough time: pure, driven by the bytes going in and out and by the clock.
    ///
    /// A request's clock starts at its first byte and stops when the answer starts going out; trickling more bytes
    /// does not extend it. Between requests, the idle clock runs. A request past its time is answered 408, and the
    /// connection closes once that answer is written, or `closeGrace` later whatever happens: a client that does not
    /// read has answers queued ahead of it, so it would never be written.
    package struct StateMachine {
        package enum State: Equatable {
            /// No request under way since `since`.
            case idle(since: ContinuousClock.Instant)
            /// A request's bytes started arriving; it must be answered by `deadline`.
            case receiving(deadline: ContinuousClock.Instant)
            /// The 408 is being written; the connection closes by `deadline` even if it is not.
            case closing(deadline: ContinuousClock.Instant)
            /// The connection was closed for being too slow.
            case closed
        }

        package enum Expiry: Equatable {
            /// The client did not finish its request in time: answer 408, then close.
            case requestTimeout
            /// Idle too long between requests: close quietly.
            case idle
            /// The 408 was not written within `closeGrace`: close without it.
            case unwrittenAnswer
        }

        package enum TimerAction: Equatable {
            case close(Expiry)
            case check(at: ContinuousClock.Instant)
        }

        package private(set) var state: State
        package let requestTimeout: Duration
        package let idleTimeout: Duration
        package let closeGrace: Duration

        package init(now: ContinuousClock.Instant, requestTimeout: Duration, idleTimeout: Duration, closeGrace: Duration = .seconds(1)) {
            self.state = .idle(since: now)
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
            self.closeGrace = closeGrace
        }

        /// When the timer should next fire.
        package var nextCheck: ContinuousClock.Instant? {
            switch state {
            case .idle(let since): return since + idleTimeout
            case .receiving(let deadline), .closing(let deadline): return deadline
            case .closed: return nil
            }
        }

        /// Request bytes arrived.
        package mutating func received(now: ContinuousClock.Instant) {
            if case .idle = state { state = .receiving(deadline: now + requestTimeout) }
        }

        /// The answer started going out (or went out): the request's clock stops; the idle one starts.
        package mutating func answered(now: ContinuousClock.Instant) {
            if case .receiving = state { state = .idle(since: now) }
        }

        /// The timer fired.
        package mutating func timerFired(now: ContinuousClock.Instant) -> TimerAction? {
            switch state {
            case .closed:
                return nil
            case .receiving(let deadline):
                guard now >= deadline else { return .check(at: deadline) }
                state = .closing(deadline: now + closeGrace)
                return .close(.requestTimeout)
            case .closing(let deadline):
                guard now >= deadline else { return .check(at: deadline) }
                state = .closed
                return .close(.unwrittenAnswer)
            case .idle(let since):
                guard now >= since + idleTimeout else { return .check(at: since + idleTimeout) }
                state = .closed
                return .close(.idle)
            }
        }
    }
}
