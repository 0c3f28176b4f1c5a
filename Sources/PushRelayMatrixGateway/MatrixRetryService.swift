import Foundation
import Logging
import PushRelayCore
import PushRelayStore
import ServiceLifecycle

/// Works the Matrix retry queue: devices that failed transiently after the homeserver was answered 200.
///
/// Every `matrix.retry.poll_interval` it takes the due items, delivers them again (concurrently, through the same
/// runners as requests) and removes them once delivered, found dead, or failed for good; transient failures are
/// rescheduled with exponential backoff (honouring `Retry-After`) until `max_attempts`. The queue lives in the
/// database, so a restart resumes where the last process stopped; with several instances each batch is claimed by
/// one (`claimDue`). Also prunes the de-duplication window.
package struct MatrixRetryService: Service {
    /// Its clock is where the polls wait.
    package let gateway: MatrixGateway

    package init(gateway: MatrixGateway, claimLease: Duration = .seconds(20)) {
        self.gateway = gateway
        self.claimLease = claimLease
    }

    /// Items handled per poll.
    package static let batchSize = 64
    /// How long a claimed batch stays this instance's: past the time to deliver it (each item within its delivery
    /// deadline, concurrently; `lease(deadlineMs:)`). Items of an instance that died are due again, for any instance,
    /// once it ends.
    package var claimLease: Duration

    /// Twice the delivery deadline and two seconds more.
    package static func lease(deadlineMs: Int64) -> Duration { .milliseconds(2 * deadlineMs + 2000) }

    package func run() async throws {
        var lastPrune = Date.distantPast
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await runOnce()
            let now = gateway.clock.now()
            if now.timeIntervalSince(lastPrune) >= 60 {
                lastPrune = now
                do {
                    try await gateway.store.pruneDedup(before: now.addingTimeInterval(-Double(gateway.settings.dedupWindowMs) / 1000))
                } catch  where !error.isShutdownNoise {
                    gateway.logger.error("pruning the matrix de-duplication window failed: \(error)")
                } catch {
                }
            }
            try? await cancelWhenGracefulShutdown { try await gateway.clock.sleep(for: .milliseconds(gateway.settings.retry.pollIntervalMs)) }
        }
    }

    /// Handles the items due now. Returns how many were handled.
    @discardableResult
    func runOnce() async -> Int {
        let items: [MatrixRetryItem]
        do {
            items = try await gateway.store.claimDue(now: gateway.clock.now(), limit: Self.batchSize, lease: claimLease)
        } catch {
            if !error.isShutdownNoise { gateway.logger.error("reading the matrix retry queue failed: \(error)") }
            return 0
        }
        await withTaskGroup(of: Void.self) { group in
            for item in items { group.addTask { await handle(item) } }
        }
        return items.count
    }

    private func handle(_ item: MatrixRetryItem) async {
        let logger = gateway.logger
        let short = TokenDisplay.short(item.pushkey)
        let notification: MatrixNotification
        do {
            notification = try MatrixNotification(body: JSONParser.parse(Array(item.notification.utf8)))
        } catch {
            logger.error("dropping an unreadable matrix retry item", metadata: ["id": .stringConvertible(item.id), "error": .string("\(error)")])
            try? await gateway.store.remove(id: item.id)
            return
        }
        guard let device = notification.devices.first else {
            try? await gateway.store.remove(id: item.id)
            return
        }
        let outcome = await gateway.dispatch(notification, device: device)
        let attempts = item.attempts + 1
        do {
            switch outcome {
            case .delivered:
                logger.info("retry delivered", metadata: ["token": .string(short), "attempts": .stringConvertible(attempts)])
                try await gateway.store.remove(id: item.id)
            case .skipped(let why), .failed(let why):
                logger.notice("retry ended without delivery", metadata: ["token": .string(short), "reason": .string(why)])
                try await gateway.store.remove(id: item.id)
            case .rejected(let reason, _) where DeliveryFailure.providerMismatchReasons.contains(reason):
                // The pushkey does not fit the app it was listed under, which anyone can cause: not proof the device is
                // gone, so not remembered (the dead-token memory is the pushkey's under every app id).
                logger.notice(
                    "retry found the pushkey does not fit its app; dropped",
                    metadata: ["token": .string(short), "reason": .string(reason)]
                )
                try await gateway.store.remove(id: item.id)
            case .rejected(let reason, let provider):
                // The homeserver cannot be told now; the next notify for this pushkey answers it in `rejected`.
                try await gateway.dispatcher.rememberDead(
                    MatrixGateway.deviceKey(device),
                    provider: provider ?? "matrix",
                    reason: reason,
                    message: "found dead by a background retry"
                )
                try await gateway.store.remove(id: item.id)
                logger.notice("retry found the pushkey dead; it will be rejected on its next notification", metadata: ["token": .string(short)])
            case .transient(let failure):
                guard attempts < gateway.settings.retry.maxAttempts else {
                    logger.warning(
                        "giving up on a matrix push after \(attempts) attempts",
                        metadata: ["token": .string(short), "error": .string(failure.message)]
                    )
                    try await gateway.store.remove(id: item.id)
                    return
                }
                let retryAfter = failure.retryAfterSeconds
                let delay = gateway.settings.retry.delayMs(afterAttempts: attempts, retryAfterSeconds: retryAfter)
                try await gateway.store.reschedule(
                    id: item.id,
                    attempts: attempts,
                    next: gateway.clock.now().addingTimeInterval(Double(delay) / 1000),
                    lastError: failure.message
                )
            }
        } catch {
            logger.error("updating the matrix retry queue failed", metadata: ["id": .stringConvertible(item.id), "error": .string("\(error)")])
        }
    }
}
