import Logging
import PushRelayCore
import PushRelayStore
import ServiceLifecycle

/// Watches the storage engine's health while the server runs: during a fault it probes every `interval` (so the end
/// of the fault is noticed without a request, and `/ready` turns ready again), and it logs each change once, not per
/// refused request.
struct StorageMonitor: Service {
    let engine: any StorageEngine
    /// Where the probes wait.
    let clock: any TimePort
    let logger: Logger
    var interval: Duration = .seconds(1)

    func run() async throws {
        var last = engine.health
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully && !Task.isCancelled else { return }
            var now = engine.health
            if !now.isOK { now = await engine.probe() }
            switch (last.isOK, now.isOK) {
            case (true, false):
                logger.error(
                    "storage is failing: requests that need the database get 503 until it recovers",
                    metadata: ["error": .string(now.message ?? "unknown")]
                )
            case (false, true):
                let since = last.since.map { " after \(Int(-$0.timeIntervalSinceNow)) s" } ?? ""
                logger.notice("storage recovered\(since): writes go through again")
            default:
                break
            }
            last = now
        }
    }
}
