import Logging
import PushRelayCore
import PushRelayServerMetrics
import PushRelayStore
import ServiceLifecycle

/// Deletes usage and delivery-log days older than `quota.retention_days`, expired dead tokens, and push-channel
/// bindings Home Assistant has not sent for the retention: at start, when the UTC day changes and every hour of
/// wall-clock time, in small paced steps (`PrunePace`) that leave the request path's writes their turn.
///
/// The schedule follows the wall clock (`clock`), read every `checkEvery` on it: what is due depends on the date,
/// not on how long the process has run, so a clock that jumps (or runs fast, as in `Benchmarks/soak.sh`) is followed
/// within one check.
package struct PruneService: Service {
    package let admin: any QuotaAdministration
    package let clock: any TimePort
    package let retentionDays: Int
    package let metrics: PushRelayMetrics?
    package let logger: Logger
    /// Where the push-channel bindings are pruned (nil: they are not).
    package var bindings: (any PushChannelStorage)? = nil
    /// Steps of `PrunePace`'s default size, paused on `clock`.
    package var pace: PrunePace { PrunePace(clock: clock) }
    /// How often the wall clock is read to see whether a prune is due.
    var checkEvery: Duration = .seconds(5)
    /// Wall-clock seconds between prunes within one UTC day.
    package var interval: Double = 3600

    package init(
        admin: any QuotaAdministration,
        clock: any TimePort,
        retentionDays: Int,
        metrics: PushRelayMetrics?,
        logger: Logger,
        bindings: (any PushChannelStorage)? = nil
    ) {
        self.admin = admin
        self.clock = clock
        self.retentionDays = retentionDays
        self.metrics = metrics
        self.logger = logger
        self.bindings = bindings
    }

    package func run() async throws {
        var schedule = PruneSchedule(interval: interval)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let now = clock.now()
            if schedule.isDue(at: now) {
                schedule.ran(at: now)
                await pruneOnce(today: UTCDay(now))
            }
            try? await cancelWhenGracefulShutdown { try await clock.sleep(for: checkEvery) }
        }
    }

    /// Deletes the bindings not sent since the start of the day `retentionDays` before `today`, paced as the rest.
    private func pruneBindings(today: UTCDay) async throws -> Int {
        guard let bindings else { return 0 }
        let cutoff = today.adding(days: -Int64(max(retentionDays, 0))).start
        let pace = self.pace
        var total = 0
        while true {
            let started = pace.clock.instant
            let n = try await bindings.pruneBindings(notSentSince: cutoff, limit: pace.rowsPerStep)
            total += n
            if n > 0 { metrics?.recordPruned(n) }
            if n < pace.rowsPerStep || Task.isCancelled { return total }
            try? await pace.clock.sleep(for: max(pace.pause, started.duration(to: pace.clock.instant)))
        }
    }

    private func pruneOnce(today: UTCDay) async {
        let started = clock.instant
        do {
            let n = try await cancelWhenGracefulShutdown {
                let rows = try await admin.prune(today: today, retentionDays: retentionDays, pace: pace) { metrics?.recordPruned($0) }
                return try await rows + pruneBindings(today: today)
            }
            if n > 0 {
                logger.info(
                    "pruned rows older than the retention",
                    metadata: [
                        "rows": .stringConvertible(n), "retention_days": .stringConvertible(retentionDays),
                        "took_ms": .stringConvertible(Int(started.duration(to: clock.instant) / .milliseconds(1))),
                    ]
                )
            }
        } catch is CancellationError {
            return
        } catch {
            logger.error("pruning old quota days failed: \(error)")
        }
    }
}
