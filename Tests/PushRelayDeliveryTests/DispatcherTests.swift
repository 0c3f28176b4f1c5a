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
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// The one delivery pipeline, driven directly: quota, provider, delivery log, dead-token memory and metrics.
///
/// ThreadSanitizer: the pipeline's gates, breakers and records, shared by concurrent dispatches.
@Suite struct DispatcherTests {
    struct Rig {
        let dispatcher: Dispatcher
        let storage: Storage
        let clock: ManualClock
        let metrics: PushRelayMetrics
        let provider: ScriptedProvider
    }

    static func rig(_ steps: [ScriptedProvider.Step] = [.deliver], deadTokenTTLms: Int64 = 3_600_000) throws -> Rig {
        let database = try PushRelayDatabase(path: TestServer.tempPath())
        try database.migrate()
        let storage = Storage.sqlite(database)
        let clock = ManualClock("2026-11-21T12:00:00Z")
        let metrics = PushRelayMetrics()
        let provider = ScriptedProvider(name: "scripted", steps)
        var settings = DeliverySettings()
        settings.deadTokenTTLms = deadTokenTTLms
        settings.retryBaseMs = 1
        // These tests are about the ledger, the log and the dead-token memory, not the deadline (ProviderDeadlineTests):
        // the dispatcher's timers and the time its deadlines are measured on (the deadline, the storage's share of
        // it, the backoff, the wait for a place) are a clock nobody moves, so no deadline passes however slowly the
        // machine runs the test.
        let dispatcher = Dispatcher(
            providers: ["scripted": provider, "sandbox": SandboxProvider()],
            quota: storage.quota,
            deliveries: storage.deliveries,
            settings: DispatcherSettings(settings),
            clock: clock,
            metrics: metrics,
            logger: Logger(label: "test")
        )
        return Rig(dispatcher: dispatcher, storage: storage, clock: clock, metrics: metrics, provider: provider)
    }

    static func dispatch(
        token: String = "tok:dispatch",
        provider: String = "scripted",
        quota: Dispatch.Quota,
        kind: DeliveryKind = .notification
    ) -> Dispatch {
        let n = AndroidTranslation.translate(try! HANotification(body: ["message": "Hi", "push_token": .string(token)]))
        return Dispatch(
            Delivery(platform: .android, pushToken: token, appID: "app", notification: n, kind: kind),
            provider: provider,
            quota: quota,
            client: nil
        )
    }

    @Test func countedDispatchesStopAtTheLimitAndTheNoticeIsDecidedOnce() async throws {
        let rig = try Self.rig()
        let counted = Dispatch.Quota.counted(QuotaPolicy(dailyLimit: 2))
        var notices = 0
        var delivered = 0
        for _ in 0..<5 {
            switch await rig.dispatcher.dispatch(Self.dispatch(quota: counted)) {
            case .delivered(_, let limits):
                delivered += 1
                #expect(limits?.successful == delivered)
            case .refused(let r):
                #expect(r.maximum == 2)
                if r.decision.sendNotice { notices += 1 }
            default:
                Issue.record("unexpected outcome")
            }
        }
        #expect(delivered == 2)
        #expect(notices == 1)
        #expect(rig.provider.callCount == 2)
        let log = try await rig.storage.deliveries.recentDeliveries(pushToken: "tok:dispatch")
        #expect(log.count == 2)
        #expect(log.allSatisfy { $0.counted && $0.outcome == .delivered && $0.payload == nil })
    }

    @Test func aDeadTokenIsRememberedForTheConfiguredTimeAndItsSlotBecomesAnError() async throws {
        let rig = try Self.rig([.fail(.invalidToken(reason: "UNREGISTERED", message: "gone"))], deadTokenTTLms: 3_600_000)
        let counted = Dispatch.Quota.counted(QuotaPolicy(dailyLimit: 10))
        guard case .failed(.invalidToken, let limits) = await rig.dispatcher.dispatch(Self.dispatch(quota: counted)) else {
            Issue.record("expected the provider's invalid token")
            return
        }
        #expect(limits?.errors == 1)
        #expect(limits?.successful == 0)
        // Remembered: answered dead without calling the provider, counted or not, until the TTL passes.
        guard case .dead(let dead, _) = await rig.dispatcher.dispatch(Self.dispatch(quota: counted)) else {
            Issue.record("expected the token to be remembered as dead")
            return
        }
        #expect(dead.reason == "UNREGISTERED")
        #expect(dead.provider == "scripted")
        guard case .dead = await rig.dispatcher.dispatch(Self.dispatch(quota: .uncounted(checkDead: true))) else {
            Issue.record("an uncounted dispatch that checks must see the mark")
            return
        }
        #expect(rig.provider.callCount == 1)
        rig.clock.advance(by: 3_601)
        _ = await rig.dispatcher.dispatch(Self.dispatch(quota: .uncounted(checkDead: true)))
        #expect(rig.provider.callCount == 2)
    }

    @Test func uncountedDispatchesLeaveTheQuotaAlone() async throws {
        let rig = try Self.rig()
        for kind in [DeliveryKind.rateLimitNotice, .webPushRelay, .callInvite] {
            guard case .delivered(_, let limits) = await rig.dispatcher.dispatch(Self.dispatch(quota: .uncounted(checkDead: false), kind: kind))
            else {
                Issue.record("expected a delivery")
                return
            }
            #expect(limits == nil)
        }
        let limits = try await rig.storage.quota.rateLimits(
            pushToken: "tok:dispatch",
            appID: "app",
            day: UTCDay(rig.clock.now()),
            policy: QuotaPolicy()
        )
        #expect(limits.attempts == 0)
        let log = try await rig.storage.deliveries.recentDeliveries(pushToken: "tok:dispatch")
        #expect(Set(log.map(\.kind)) == [.rateLimitNotice, .webPushRelay, .callInvite])
        #expect(log.allSatisfy { !$0.counted })
    }

    @Test func theSandboxGoesThroughTheSamePipelineAndKeepsItsPayloadInTheLog() async throws {
        let rig = try Self.rig()
        let counted = Dispatch.Quota.counted(QuotaPolicy(dailyLimit: 1))
        guard case .delivered(let receipt, _) = await rig.dispatcher.dispatch(Self.dispatch(provider: "sandbox", quota: counted)) else {
            Issue.record("expected a delivery")
            return
        }
        #expect(receipt.messageID.hasPrefix("sandbox:"))
        guard case .refused = await rig.dispatcher.dispatch(Self.dispatch(provider: "sandbox", quota: counted)) else {
            Issue.record("the sandbox is counted like any provider")
            return
        }
        let log = try await rig.storage.deliveries.recentDeliveries(pushToken: "tok:dispatch")
        #expect(log.count == 1)
        let payload = try #require(log.first?.payload)
        #expect(try JSONParser.parse(Array(payload.utf8)) == receipt.sentPayload)
    }

    @Test func everyProviderCallIsCountedInTheMetricsByOutcome() async throws {
        let rig = try Self.rig([.deliver, .fail(.payloadTooLarge(message: "too big"))])
        _ = await rig.dispatcher.dispatch(Self.dispatch(quota: .uncounted(checkDead: false)))
        _ = await rig.dispatcher.dispatch(Self.dispatch(quota: .uncounted(checkDead: false)))
        let text = String(decoding: rig.metrics.render(), as: UTF8.self)
        #expect(text.contains(#"pushrelay_deliveries_total{provider="scripted",outcome="delivered"} 1"#))
        #expect(text.contains(#"pushrelay_deliveries_total{provider="scripted",outcome="payload_too_large"} 1"#))
        #expect(text.contains(#"pushrelay_delivery_duration_seconds_count{provider="scripted"} 2"#))
    }

    @Test func anUnknownProviderIsAConfigurationFailureAndCountsNothing() async throws {
        let rig = try Self.rig()
        guard case .failed(.configuration, nil) = await rig.dispatcher.dispatch(Self.dispatch(provider: "missing", quota: .counted(QuotaPolicy())))
        else {
            Issue.record("expected a configuration failure")
            return
        }
        let limits = try await rig.storage.quota.rateLimits(
            pushToken: "tok:dispatch",
            appID: "app",
            day: UTCDay(rig.clock.now()),
            policy: QuotaPolicy()
        )
        #expect(limits.attempts == 0)
    }
}
