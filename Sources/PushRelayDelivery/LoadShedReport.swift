import Foundation
import Logging
import PushRelayCore
import PushRelayServerMetrics

/// Counts dispatches refused after waiting in vain for a place at their provider's in-flight bound, and logs them at most once per
/// interval (with how many there were), so that an overload does not also flood the log.
final class LoadShedReport: Sendable {
    private struct State {
        var lastLog: ContinuousClock.Instant?
        var unreported = 0
    }

    private let metrics: PushRelayMetrics?
    private let clock: any TimePort
    private let logger: Logger
    private let interval: Duration
    private let state = Locked(State())

    init(metrics: PushRelayMetrics?, clock: any TimePort, logger: Logger, interval: Duration = .seconds(10)) {
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.interval = interval
    }

    func shed(provider: String, limit: Int) {
        metrics?.recordShed(provider: provider)
        let now = clock.instant
        let report: Int? = state.withLock { s in
            s.unreported += 1
            if let last = s.lastLog, now - last < interval { return nil }
            s.lastLog = now
            defer { s.unreported = 0 }
            return s.unreported
        }
        guard let count = report else { return }
        logger.warning(
            "refusing deliveries: provider at its in-flight bound",
            metadata: ["provider": .string(provider), "limit": .stringConvertible(limit), "refused_since_last_report": .stringConvertible(count)]
        )
    }
}
