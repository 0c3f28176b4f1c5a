import Synchronization

/// What one provider instance's deliveries and connections did that a caller never sees in an answer, counted for
/// `/metrics`: sends made again and why, requests answered as possibly delivered (never sent again), connections the
/// provider rotated with a GOAWAY and connections found dead. Written by the transport and the delivery runner, read
/// at each scrape. Thread-safe.
public final class ProviderTransportFigures: Sendable {
    /// Why a request was sent again.
    public enum ResendReason: String, Sendable, CaseIterable {
        /// The provider said it did not process it: `REFUSED_STREAM`, or a stream above a GOAWAY's last stream id.
        /// Sent once more on a new connection.
        case notProcessed = "not_processed"
        /// The provider answered that it could not take it now (429, 5xx, an OAuth token it refused, a connection that
        /// never opened). Sent again after a backoff, within the delivery deadline.
        case providerRetry = "provider_retry"
    }

    private let notProcessed = Atomic<Int>(0)
    private let providerRetries = Atomic<Int>(0)
    private let possiblyDeliveredCount = Atomic<Int>(0)
    private let rotated = Atomic<Int>(0)
    private let dead = Atomic<Int>(0)

    public init() {}

    public func resent(_ reason: ResendReason) {
        switch reason {
        case .notProcessed: notProcessed.add(1, ordering: .relaxed)
        case .providerRetry: providerRetries.add(1, ordering: .relaxed)
        }
    }

    /// A request was written and lost its answer; it is answered as failed and not sent again.
    public func possiblyDelivered() { possiblyDeliveredCount.add(1, ordering: .relaxed) }
    /// The provider sent GOAWAY: the connection takes no new request and closes once its streams are answered.
    public func connectionRotated() { rotated.add(1, ordering: .relaxed) }
    /// A connection went silent (its PING unanswered) and was given up.
    public func connectionDead() { dead.add(1, ordering: .relaxed) }

    /// Sends made again, by reason.
    public func resends(_ reason: ResendReason) -> Int {
        switch reason {
        case .notProcessed: notProcessed.load(ordering: .relaxed)
        case .providerRetry: providerRetries.load(ordering: .relaxed)
        }
    }

    public var possiblyDeliveredTotal: Int { possiblyDeliveredCount.load(ordering: .relaxed) }
    public var connectionsRotated: Int { rotated.load(ordering: .relaxed) }
    public var connectionsDead: Int { dead.load(ordering: .relaxed) }
}
