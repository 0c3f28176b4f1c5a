import NIOCore
import PushRelayCore

/// The relay's `Unsubscribe-URL` DELETEs waiting and running, bounded: at most `maxRunning` are sent at a time and
/// `maxWaiting` wait their turn; a DELETE past both is dropped (an unsubscribe is a courtesy, and senders choose how
/// many dead tokens they post). The rules are `State`'s; `WebPushRelayService` runs the DELETEs as background work.
package final class UnsubscribeLine: Sendable {
    /// What becomes of a submitted DELETE.
    package enum Decision: Equatable {
        /// Send it now.
        case run
        /// It waits until one running ends.
        case queued
        /// Past both bounds: not sent.
        case dropped
    }

    /// The line's rules, without any sending.
    package struct State {
        package let maxRunning: Int
        package let maxWaiting: Int
        package private(set) var running = 0
        package private(set) var waiting: CircularBuffer<String> = []
        /// DELETEs dropped since the start.
        package private(set) var dropped = 0

        package init(maxRunning: Int, maxWaiting: Int) {
            self.maxRunning = maxRunning
            self.maxWaiting = maxWaiting
        }

        package mutating func submit(_ url: String) -> Decision {
            if running < maxRunning {
                running += 1
                return .run
            }
            if waiting.count < maxWaiting {
                waiting.append(url)
                return .queued
            }
            dropped += 1
            return .dropped
        }

        /// One running DELETE ended: the next waiting one to send in its place, if any.
        package mutating func finished() -> String? {
            if let next = waiting.popFirst() { return next }
            running = max(running - 1, 0)
            return nil
        }
    }

    private let state: Locked<State>

    package init(maxRunning: Int = 4, maxWaiting: Int = 64) {
        state = Locked(State(maxRunning: maxRunning, maxWaiting: maxWaiting))
    }

    package func submit(_ url: String) -> Decision { state.withLock { $0.submit(url) } }

    package func finished() -> String? { state.withLock { $0.finished() } }

    /// DELETEs running and waiting now, and dropped since the start.
    package var figures: (running: Int, waiting: Int, dropped: Int) { state.withLock { ($0.running, $0.waiting.count, $0.dropped) } }
}
