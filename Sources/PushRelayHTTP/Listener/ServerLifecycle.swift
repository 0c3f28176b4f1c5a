import PushRelayCore
import Synchronization

/// Where a running server is in its life, and how it stops gracefully: what SIGTERM and SIGINT do, and what a caller
/// that runs the server in process does to stop it the same way.
///
/// A stop goes through the phases in order:
/// 1. `draining`: `/ready` answers 503 `ShuttingDown` at once, so that a load balancer takes the instance out of
///    service; for `http.drain_period` the server goes on accepting and serving every route as before, but each answer
///    says `Connection: close`, so clients open their next connection anew (through the load balancer, to another
///    instance).
/// 2. `closing`: the listening socket closes (no new connection is accepted; a socket systemd holds stays open for
///    the next process), requests in flight are answered within their deadline and their connections close, idle
///    connections close, and push-channel websockets get close code 1012 (service restart), so that the apps
///    reconnect.
/// 3. `stopped`: the background services, the providers and the storage have stopped after the connections.
///
/// Start a stop with `beginStop()`; a second call during the drain ends the drain at once. The application's
/// `runService` returns once the server is `stopped`.
public final class ServerLifecycle: Sendable {
    public enum Phase: Int, Sendable, Comparable, CustomStringConvertible {
        case serving, draining, closing, stopped

        public static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .serving: "serving"
            case .draining: "draining"
            case .closing: "closing"
            case .stopped: "stopped"
            }
        }
    }

    /// The phase, for the reads on every request (`isStopping`), which take no lock.
    private let current = Atomic<Int>(Phase.serving.rawValue)
    private struct State {
        var phase = Phase.serving
        /// What starts the graceful shutdown of the service group the application runs in (`onStop`).
        var trigger: (@Sendable () async -> Void)?
    }

    private let state = Locked(State())
    /// Offered when the drain ends: `true` when its time is up, `false` when it was cut short.
    private let drainOver = FirstResult<Bool>()

    public init() {}

    /// The current phase.
    public var phase: Phase { state.withLock { $0.phase } }

    /// Whether a stop has begun (draining or later): every answer then closes its connection.
    package var isStopping: Bool { current.load(ordering: .relaxed) >= Phase.draining.rawValue }

    /// Whether the server has stopped accepting (closing or later).
    package var isClosing: Bool { current.load(ordering: .relaxed) >= Phase.closing.rawValue }

    /// Stops the server as SIGTERM does: the first call starts the drain (and the graceful shutdown of the service
    /// group); a call during the drain ends the drain now; later calls do nothing.
    public func beginStop() {
        let (trigger, endDrain) = state.withLock { s -> ((@Sendable () async -> Void)?, Bool) in
            switch s.phase {
            case .serving:
                s.phase = .draining
                current.store(Phase.draining.rawValue, ordering: .relaxed)
                return (s.trigger, false)
            case .draining:
                return (nil, true)
            case .closing, .stopped:
                return (nil, false)
            }
        }
        if endDrain { drainOver.offer(false) }
        if let trigger { Task { await trigger() } }
    }

    /// Registers what starts the graceful shutdown of the service group the server runs in; called at once if a stop
    /// has begun already.
    package func onStop(_ trigger: @escaping @Sendable () async -> Void) {
        let now = state.withLock { s -> Bool in
            s.trigger = trigger
            return s.phase != .serving
        }
        if now { Task { await trigger() } }
    }

    /// A graceful shutdown that did not come through `beginStop()` (the service group's own): the drain begins.
    package func shutdownBegan() {
        advance(to: .draining)
    }

    /// Waits until the drain is over: `period` after it began, or earlier when `beginStop()` is called again during it.
    /// Returns whether the whole period passed.
    package func drain(for period: Duration, clock: any TimePort) async -> Bool {
        guard period > .zero else { return true }
        let timer = clock.schedule(after: period) { [drainOver] in drainOver.offer(true) }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { drainOver.start($0) }
        } onCancel: {
            drainOver.offer(false)
        }
    }

    /// Moves to `phase` unless the server is there or further already.
    package func advance(to phase: Phase) {
        state.withLock { s in
            guard s.phase < phase else { return }
            s.phase = phase
            current.store(phase.rawValue, ordering: .relaxed)
        }
    }
}
