import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import PushRelaySQLite
import PushRelayStore
import PushRelayTestSupport

@testable import PushRelayServer

/// A scripted provider behind the real delivery pipeline, for driving a service directly (no HTTP): a fresh SQLite
/// file, a `Dispatcher` on a `ManualClock` nobody moves unless a test does (nothing is retried, so no outcome depends
/// on wall time), and a quota ledger and delivery log that the test can make
/// fail or stall (`StorageFaults`).
package struct ScriptedProviderRig {
    package let storage: Storage
    /// The ledger and log the dispatcher uses: the storage's, through `faults`.
    package let quota: any QuotaLedger
    package let deliveries: any DeliveryLog
    package let faults: StorageFaults
    package let dispatcher: Dispatcher
    package let provider: ScriptedProvider
    package let clock: ManualClock
    package let logger = Logger(label: "test")

    /// The provider is named `providerName` in the dispatcher; `configure` changes the delivery settings last.
    package init(
        _ steps: [ScriptedProvider.Step] = [.deliver],
        providerName: String = "scripted",
        configure: (inout DeliverySettings) -> Void = { _ in }
    ) throws {
        let database = try PushRelayDatabase(path: TestServer.tempPath())
        try database.migrate()
        storage = Storage.sqlite(database)
        faults = StorageFaults()
        quota = FaultyQuotaLedger(storage.quota, faults: faults)
        deliveries = FaultyDeliveryLog(storage.deliveries, faults: faults)
        clock = ManualClock("2026-11-21T12:00:00Z")
        provider = ScriptedProvider(name: providerName, steps)
        var settings = DeliverySettings()
        // A transient failure is answered at once: a retry would wait for a backoff on the manual clock.
        settings.maxAttempts = 1
        // The deadline and the storage's share of it are timers on the manual clock, and what is left of the deadline
        // is measured on it too: however slowly two busy cores run a dispatch, no deadline passes unless the test
        // steps the clock.
        settings.deadlineMs = 60_000
        settings.maxWaitMs = 30_000
        configure(&settings)
        dispatcher = Dispatcher(
            providers: [providerName: provider],
            quota: quota,
            deliveries: deliveries,
            settings: DispatcherSettings(settings),
            clock: clock,
            metrics: nil,
            logger: Logger(label: "test")
        )
    }

    /// Today's quota figures of `token` (read past the faults).
    package func rateLimits(_ token: String, appID: String?, policy: QuotaPolicy = QuotaPolicy()) async throws -> RateLimits {
        try await storage.quota.rateLimits(pushToken: token, appID: appID, day: UTCDay(clock.now()), policy: policy)
    }

    /// The delivery-log rows of `token`, newest first (read past the faults).
    package func logged(_ token: String) async throws -> [LoggedDelivery] {
        try await storage.deliveries.recentDeliveries(pushToken: token)
    }

    /// Runs `dispatching` while the storage is stalled, and answers it as the storage's share of the deadline runs out
    /// on the manual clock; then lets the stalled storage call finish.
    package func withStalledStorage<T: Sendable>(_ dispatching: @escaping @Sendable () async -> T) async -> T {
        faults.mode = .hold
        let task = Task { await dispatching() }
        // The storage timer is scheduled before the storage is called, so once a call waits, the timer is there.
        await faults.waitUntilHeld()
        clock.advance(by: 60)
        let result = await task.value
        faults.mode = .pass
        faults.release()
        return result
    }
}

/// What the rig's ledger and log do on each call: pass it to SQLite, throw, or hold it until `release()`.
package final class StorageFaults: Sendable {
    package enum Mode: Sendable {
        case pass
        case fail
        case hold
    }

    package struct Failure: Error {}

    package init() {}

    private struct State {
        var mode = Mode.pass
        var held: [CheckedContinuation<Void, Never>] = []
        var heldWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    package var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }

    /// Called by the wrappers before each storage call.
    package func check() async throws {
        switch mode {
        case .pass: return
        case .fail: throw Failure()
        case .hold:
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let waiters = state.withLock { s in
                    s.held.append(c)
                    defer { s.heldWaiters = [] }
                    return s.heldWaiters
                }
                for w in waiters { w.resume() }
            }
        }
    }

    /// Storage calls held now.
    package var heldCount: Int { state.withLock { $0.held.count } }

    /// Returns once a storage call is held.
    package func waitUntilHeld() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s in
                if !s.held.isEmpty { return true }
                s.heldWaiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    /// Lets every held call go on.
    package func release() {
        let held = state.withLock { s in
            defer { s.held = [] }
            return s.held
        }
        for c in held { c.resume() }
    }
}

/// A quota ledger that asks `StorageFaults` before each call.
package final class FaultyQuotaLedger: QuotaLedger {
    package let base: any QuotaLedger
    package let faults: StorageFaults

    package init(_ base: any QuotaLedger, faults: StorageFaults) {
        self.base = base
        self.faults = faults
    }

    package func reserveUnlessDead(
        pushToken: String,
        appID: String?,
        webhookID: String?,
        day: UTCDay,
        policy: QuotaPolicy,
        now: Date,
        checkDead: Bool
    ) async throws -> ReserveResult {
        try await faults.check()
        return try await base.reserveUnlessDead(
            pushToken: pushToken,
            appID: appID,
            webhookID: webhookID,
            day: day,
            policy: policy,
            now: now,
            checkDead: checkDead
        )
    }

    package func complete(_ reservation: QuotaReservation?, record: DeliveryRecord, markDead: DeadMark?) async throws -> UsageCounters? {
        try await base.complete(reservation, record: record, markDead: markDead)
    }

    package func recordDelivered(_ record: DeliveryRecord, day: UTCDay, onError: @escaping @Sendable (any Error) -> Void) {
        base.recordDelivered(record, day: day, onError: onError)
    }

    package func rateLimits(pushToken: String, appID: String?, day: UTCDay, policy: QuotaPolicy) async throws -> RateLimits {
        try await faults.check()
        return try await base.rateLimits(pushToken: pushToken, appID: appID, day: day, policy: policy)
    }
}

/// A delivery log whose dead-token reads ask `StorageFaults` first (what an uncounted dispatch reads).
package final class FaultyDeliveryLog: DeliveryLog {
    package let base: any DeliveryLog
    package let faults: StorageFaults

    package init(_ base: any DeliveryLog, faults: StorageFaults) {
        self.base = base
        self.faults = faults
    }

    package func deadToken(_ pushToken: String, now: Date) async throws -> DeadToken? {
        try await faults.check()
        return try await base.deadToken(pushToken, now: now)
    }

    package func markDead(_ pushToken: String, _ mark: DeadMark, now: Date) async throws {
        try await base.markDead(pushToken, mark, now: now)
    }

    package func forgetDead(_ pushToken: String) async throws -> Bool {
        try await base.forgetDead(pushToken)
    }

    package func log(_ record: DeliveryRecord) async throws {
        try await base.log(record)
    }

    package func recentDeliveries(pushToken: String?, limit: Int) async throws -> [LoggedDelivery] {
        try await base.recentDeliveries(pushToken: pushToken, limit: limit)
    }

    package func deliverySummary(day: UTCDay, scanLimit: Int) async throws -> DeliverySummary {
        try await base.deliverySummary(day: day, scanLimit: scanLimit)
    }

    package func deadTokens(now: Date, limit: Int) async throws -> [ListedDeadToken] {
        try await base.deadTokens(now: now, limit: limit)
    }

    package func flush() async throws {
        try await base.flush()
    }
}
