import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import PushRelayProviders
import PushRelaySQLite
import PushRelayServerMetrics
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// A quota reservation that does not commit within its share of the delivery deadline is the storage's stall, not the
/// provider's: answered `.storageBusy` without calling the provider, counted in `/metrics`, kept from the circuit
/// breaker, and the late reservation holds no slot.
///
/// ThreadSanitizer: a quota reservation raced against the storage's share of the deadline.
@Suite struct StorageStallTests {
    @Test func theStorageGetsWhatTheProvidersHalfLeaves() {
        let deadline = Duration.milliseconds(8_000)
        #expect(Dispatcher.storageBudget(remaining: deadline, deadline: deadline) == .milliseconds(4_000))
        #expect(Dispatcher.storageBudget(remaining: .milliseconds(6_000), deadline: deadline) == .milliseconds(2_000))
        // A dispatch that waited more than half the deadline for a place splits what is left.
        #expect(Dispatcher.storageBudget(remaining: .milliseconds(3_000), deadline: deadline) == .milliseconds(1_500))
    }

    @Test func aStalledReservationIsAnsweredAsStorageBusyAndNeverBlamesTheProvider() async throws {
        let database = try PushRelayDatabase(path: TestServer.tempPath())
        try database.migrate()
        let storage = Storage.sqlite(database)
        // A real SQLite ledger whose calls wait until the test lets them through.
        let faults = StorageFaults()
        faults.mode = .hold
        let ledger = FaultyQuotaLedger(storage.quota, faults: faults)
        let clock = ManualClock()
        let metrics = PushRelayMetrics()
        let provider = ScriptedProvider(name: "scripted", [.deliver])
        var settings = DeliverySettings()
        settings.deadlineMs = 8_000
        // A breaker that one failure in two would open.
        settings.breakerMinRequests = 2
        settings.breakerFailureRatio = 0.5
        let dispatcher = Dispatcher(
            providers: ["scripted": provider],
            quota: ledger,
            deliveries: storage.deliveries,
            settings: DispatcherSettings(settings),
            clock: clock,
            metrics: metrics,
            logger: Logger(label: "test")
        )
        let n = AndroidTranslation.translate(try HANotification(body: ["message": "Hi", "push_token": "tok:stall"]))
        let dispatch = Dispatch(
            Delivery(platform: .android, pushToken: "tok:stall", appID: "app", notification: n),
            provider: "scripted",
            quota: .counted(QuotaPolicy(dailyLimit: 5)),
            client: nil
        )

        let stalled = 4
        let outcomes = try await withThrowingTaskGroup(of: DispatchOutcome.self) { group in
            for _ in 0..<stalled { group.addTask { await dispatcher.dispatch(dispatch) } }
            // Every dispatch is inside the ledger, its storage timer scheduled: half the deadline passes.
            try await eventually("every dispatch is held by the ledger, its storage timer scheduled") {
                faults.heldCount >= stalled && clock.pendingDelays.count >= stalled
            }
            clock.advance(by: 4.0)
            var outcomes: [DispatchOutcome] = []
            for try await o in group { outcomes.append(o) }
            return outcomes
        }
        #expect(outcomes.allSatisfy { if case .storageBusy = $0 { true } else { false } })
        #expect(provider.callCount == 0)
        #expect(String(decoding: metrics.render(), as: UTF8.self).contains("pushrelay_storage_timeouts_total \(stalled)"))

        // The storage comes back: the late reservations commit and are turned into errors, holding no slot, and the
        // provider's circuit is closed: the next notification is delivered.
        faults.mode = .pass
        faults.release()
        let today = UTCDay(clock.now())
        let limit = QuotaPolicy(dailyLimit: 5)
        try await eventually("the late reservations are turned into errors") {
            try await storage.quota.rateLimits(pushToken: "tok:stall", appID: nil, day: today, policy: limit).errors >= stalled
        }
        let limits = try await storage.quota.rateLimits(pushToken: "tok:stall", appID: nil, day: today, policy: limit)
        #expect(limits.successful == 0)
        #expect(limits.errors == stalled)
        if case .delivered(_, let after) = await dispatcher.dispatch(dispatch) {
            #expect(after?.successful == 1)
        } else {
            Issue.record("the provider's circuit must not open for a storage stall")
        }
        #expect(provider.callCount == 1)
        let log = try await storage.deliveries.recentDeliveries(pushToken: "tok:stall")
        #expect(log.filter { $0.outcome == .transient && ($0.errorMessage ?? "").contains("StorageBusy") }.count == stalled)
    }
}
