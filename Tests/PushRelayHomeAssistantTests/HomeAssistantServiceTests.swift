import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayHomeAssistant
import PushRelayPushChannel
import PushRelaySecurity
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// `HomeAssistantService` driven directly, without HTTP: over the device's channel first (a fake `PushChannelPort`),
/// else by the app's cloud route through the real dispatcher to a scripted provider on SQLite; each
/// `HomeAssistantOutcome`, what reached the provider and the ledger, and that only an accepted notification is
/// observed (binds its token to its webhook id).
@Suite struct HomeAssistantServiceTests {
    /// The push channel as the service sees it: a message id when the device "has a channel", and what it was
    /// offered and told.
    final class FakePushChannel: PushChannelPort {
        let channelMessageID: String?
        /// Whether the device's channel is paired: a provisional one takes a notification only when offered to it.
        let paired: Bool
        let offered = Locked<[HANotification]>([])
        let observed = Locked<[HANotification]>([])
        let evidence = Locked<[PushChannelPairEvidence]>([])

        init(channelMessageID: String?, paired: Bool = true) {
            self.channelMessageID = channelMessageID
            self.paired = paired
        }

        func deliver(_ n: HANotification, platform: HAPlatform, toProvisional: Bool) async -> String? {
            offered.withLock { $0.append(n) }
            return paired || toProvisional ? channelMessageID : nil
        }

        func observe(_ n: HANotification, evidence: PushChannelPairEvidence) async {
            observed.withLock { $0.append(n) }
            self.evidence.withLock { $0.append(evidence) }
        }

        func deliverConfirmed(_ event: [String: JSONValue], pushToken: String, webhookID: String?, timeout: Duration) async -> Bool {
            Issue.record("Home Assistant never asks for a confirmed delivery")
            return false
        }
    }

    struct Rig {
        let base: ScriptedProviderRig
        let port: FakePushChannel
        let service: HomeAssistantService
        let policy: QuotaPolicy

        var observed: [HANotification] { port.observed.withLock { $0 } }
        var offered: [HANotification] { port.offered.withLock { $0 } }
    }

    static let token = "tok:ha"

    static func rig(
        _ steps: [ScriptedProvider.Step] = [.deliver],
        channel: String? = nil,
        dailyLimit: Int = 10,
        apps: [AppProviders.Entry] = [.init(match: "*", provider: "scripted")],
        configure: (inout DeliverySettings) -> Void = { _ in }
    ) throws -> Rig {
        let base = try ScriptedProviderRig(steps, configure: configure)
        let appProviders = AppProviders(apps)
        let policy = QuotaPolicy(dailyLimit: dailyLimit)
        let cloud = HomeAssistantCloudSender(
            apps: appProviders,
            dispatcher: base.dispatcher,
            quota: base.quota,
            policy: policy,
            sealer: PayloadSealer(apps: appProviders, devices: base.storage.devices, logger: base.logger),
            localOnly: LocalOnlyQueue(store: base.storage.pushChannel, settings: PushChannelSettings(), clock: base.clock),
            iosOptions: IOSTranslationOptions(),
            clock: base.clock,
            logger: base.logger
        )
        let port = FakePushChannel(channelMessageID: channel)
        return Rig(base: base, port: port, service: HomeAssistantService(pushChannel: port, cloud: cloud), policy: policy)
    }

    static func notification(_ message: String = "Hi", appID: String = "io.app") -> HANotification {
        HANotification(message: message, pushToken: token, registrationInfo: .init(appID: appID, webhookID: "hook-1"))
    }

    // MARK: - Local first, cloud otherwise

    @Test func aDeviceWithALiveChannelIsServedThereWithoutTheProviderOrTheQuota() async throws {
        let rig = try Self.rig(channel: "m-1")
        let n = Self.notification()
        guard case .accepted(let id, let sent, let limits) = await rig.service.send(n, platform: .android) else {
            Issue.record("expected the channel to take it")
            return
        }
        #expect(id == "local:m-1")
        #expect(sent == JSONWriter.bytes(PushChannelWire.notificationEvent(n, confirmID: nil)))
        #expect(limits.attempts == 0)
        #expect(rig.offered == [n])
        #expect(rig.observed == [n])
        #expect(rig.base.provider.callCount == 0)
        #expect(try await rig.base.logged(Self.token).isEmpty)
    }

    @Test func withoutAChannelTheCloudRouteDeliversCountsAndObserves() async throws {
        let rig = try Self.rig()
        let n = Self.notification()
        guard case .accepted(let id, let sent, let limits) = await rig.service.send(n, platform: .android) else {
            Issue.record("expected the cloud route to deliver")
            return
        }
        #expect(id == "scripted:msg-1")
        #expect(try JSONParser.parse(sent) == rig.base.provider.deliveries.first?.notification.fcmMessage)
        #expect(limits.successful == 1 && limits.maximum == 10)
        #expect(rig.offered == [n], "the channel is tried first")
        #expect(rig.observed == [n])
        #expect(rig.base.provider.deliveries.map(\.pushToken) == [Self.token])
        let log = try await rig.base.logged(Self.token)
        #expect(log.map(\.outcome) == [.delivered])
        #expect(log.map(\.counted) == [true])
        #expect(log.first?.appID == "io.app")
    }

    @Test func aLocalOnlyAppsNotificationIsQueuedForItsDevice() async throws {
        let rig = try Self.rig(apps: [.init(match: "io.local", provider: AppProviders.localOnly)])
        let n = Self.notification(appID: "io.local")
        guard case .accepted(let id, _, let limits) = await rig.service.send(n, platform: .android) else {
            Issue.record("expected the notification to be queued")
            return
        }
        let queued = try await rig.base.storage.pushChannel.pending(webhookID: "hook-1", pushToken: Self.token)
        #expect(queued.count == 1)
        #expect(id == "queued:\(queued.first?.id ?? "?")")
        #expect(limits.attempts == 0)
        #expect(rig.observed == [n])
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aRegisteredDevicesNotificationIsSealedWhenItsRouteAsks() async throws {
        let rig = try Self.rig(apps: [.init(match: "*", provider: "scripted", encryptPayloads: true)])
        try await Self.register(key: DeviceCipher.newKey(), in: rig)
        guard case .accepted(_, let sent, _) = await rig.service.send(Self.notification("Door unlocked"), platform: .android) else {
            Issue.record("expected a sealed delivery")
            return
        }
        // Android's data-only message carries the sealed data and nothing of the text.
        let data = try JSONParser.parse(sent)["data"]
        #expect(data?["encryption_type"] == "aes_256_gcm")
        #expect(data?["encrypted"] != nil)
        #expect(!String(decoding: sent, as: UTF8.self).contains("Door unlocked"))
        #expect(rig.observed.count == 1)
    }

    // MARK: - Refusals: nothing observed

    @Test func pastTheDailyLimitItIsRateLimitedAndTheNoticeIsSentOnce() async throws {
        let rig = try Self.rig(dailyLimit: 1)
        guard case .accepted = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("the first notification is within the limit")
            return
        }
        for _ in 0..<2 {
            guard case .rateLimited(let maximum, let limits) = await rig.service.send(Self.notification(), platform: .android) else {
                Issue.record("expected the limit")
                return
            }
            #expect(maximum == 1)
            #expect(limits.successful == 1 && limits.remaining == 0)
        }
        #expect(rig.base.provider.deliveries.map(\.kind) == [.notification, .rateLimitNotice])
        #expect(rig.observed.count == 1, "only the accepted notification is observed")
        let log = try await rig.base.logged(Self.token)
        #expect(Set(log.map(\.kind)) == [.notification, .rateLimitNotice])
        #expect(log.count == 2)
        #expect(try await rig.base.rateLimits(Self.token, appID: "io.app", policy: rig.policy).attempts == 3)
    }

    @Test func aTokenTheProviderReportedDeadIsAnsweredDeadWithoutASend() async throws {
        let rig = try Self.rig([.fail(.invalidToken(reason: "UNREGISTERED", message: "gone"))])
        guard case .failed(.invalidToken(let reason, _), let first?) = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("expected the provider's invalid token")
            return
        }
        #expect(reason == "UNREGISTERED")
        #expect(first.errors == 1 && first.successful == 0)
        guard case .deadToken(let dead, let limits) = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("expected the token to be remembered as dead")
            return
        }
        #expect(dead.provider == "scripted" && dead.reason == "UNREGISTERED")
        #expect(limits.successful == 0)
        #expect(rig.base.provider.callCount == 1)
        #expect(rig.observed.isEmpty)
        #expect(try await rig.base.logged(Self.token).map(\.outcome) == [.invalidToken])
    }

    @Test func aProvidersRefusalIsFailedAndCounted() async throws {
        let rig = try Self.rig([.fail(.payloadTooLarge(message: "too big"))])
        guard case .failed(.payloadTooLarge, let limits?) = await rig.service.send(Self.notification(), platform: .ios) else {
            Issue.record("expected the provider's refusal")
            return
        }
        #expect(limits.errors == 1)
        #expect(rig.observed.isEmpty)
        #expect(try await rig.base.logged(Self.token).map(\.outcome) == [.payloadTooLarge])
    }

    @Test func aProviderWithItsCircuitOpenIsFailedBeforeTheQuotaIsTouched() async throws {
        let down = DeliveryFailure.transient(reason: "UNAVAILABLE", message: "down", retryAfterSeconds: nil)
        let rig = try Self.rig([.fail(down)]) {
            $0.breakerMinRequests = 2
            $0.breakerFailureRatio = 0.5
        }
        for _ in 0..<2 {
            guard case .failed(.transient, _?) = await rig.service.send(Self.notification(), platform: .android) else {
                Issue.record("expected the provider's failure, counted")
                return
            }
        }
        guard case .failed(.transient, nil) = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("expected the open circuit's refusal, with no quota figures")
            return
        }
        #expect(rig.base.provider.callCount == 2)
        #expect(try await rig.base.rateLimits(Self.token, appID: "io.app", policy: rig.policy).attempts == 2)
        #expect(rig.observed.isEmpty)
    }

    @Test func unreadableStorageIsStorageUnavailableAndNothingIsSent() async throws {
        let rig = try Self.rig()
        rig.base.faults.mode = .fail
        guard case .storageUnavailable = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("expected storage unavailable")
            return
        }
        #expect(await rig.service.rateLimits(pushToken: Self.token) == nil)
        #expect(rig.base.provider.callCount == 0)
        #expect(rig.observed.isEmpty)
    }

    @Test func aStorageUnavailableOnTheChannelPathIsNotObservedEither() async throws {
        let rig = try Self.rig(channel: "m-1")
        rig.base.faults.mode = .fail
        guard case .storageUnavailable = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("the local answer reads the quota figures; without them it is storage unavailable")
            return
        }
        #expect(rig.offered.count == 1)
        #expect(rig.observed.isEmpty)
    }

    @Test func aStalledQuotaReservationIsStorageBusyAndNothingIsSent() async throws {
        let rig = try Self.rig()
        let service = rig.service
        let outcome = await rig.base.withStalledStorage { await service.send(Self.notification(), platform: .android) }
        guard case .storageBusy = outcome else {
            Issue.record("expected storage busy, got \(outcome.summary)")
            return
        }
        #expect(rig.base.provider.callCount == 0)
        #expect(rig.observed.isEmpty)
    }

    @Test func anAppWithoutARunningProviderIsMisconfigured() async throws {
        let rig = try Self.rig(apps: [.init(match: "io.app", provider: "scripted"), .init(match: "io.other", provider: "not-running")])
        for appID in ["io.unrouted", "io.other"] {
            guard case .misconfigured(let message) = await rig.service.send(Self.notification(appID: appID), platform: .android) else {
                Issue.record("expected misconfigured for \(appID)")
                return
            }
            #expect(message.contains(appID))
        }
        #expect(rig.base.provider.callCount == 0)
        #expect(rig.observed.isEmpty)
    }

    @Test func aDeviceKeyThatCannotSealIsAnInternalError() async throws {
        let rig = try Self.rig(apps: [.init(match: "*", provider: "scripted", encryptPayloads: true)])
        // AES-256-GCM takes 32-byte keys only.
        try await Self.register(key: [1, 2, 3, 4, 5], in: rig)
        guard case .internalError = await rig.service.send(Self.notification(), platform: .android) else {
            Issue.record("expected an internal error")
            return
        }
        #expect(rig.base.provider.callCount == 0)
        #expect(rig.observed.isEmpty)
    }

    @Test func theReadOnlyRateLimitsLeaveTheQuotaAlone() async throws {
        let rig = try Self.rig()
        _ = await rig.service.send(Self.notification(), platform: .android)
        let limits = try #require(await rig.service.rateLimits(pushToken: Self.token))
        #expect(limits.successful == 1 && limits.attempts == 1)
        #expect(try #require(await rig.service.rateLimits(pushToken: Self.token)).attempts == 1)
    }

    /// Registers the token as a call device with `key` (what `encrypt_payloads` seals with).
    static func register(key: [UInt8], in rig: Rig) async throws {
        let storage = rig.base.storage
        let apiKey = try await storage.apiKeys.createAPIKey(label: nil, now: rig.base.clock.now())
        let device = CallDevice(
            id: "device-1",
            apiKeyID: apiKey.id,
            platform: .android,
            appID: "io.app",
            pushToken: token,
            voipToken: nil,
            label: nil,
            webhookID: "hook-1",
            encryptionKey: key
        )
        try await storage.devices.addDevice(device, now: rig.base.clock.now())
    }
}
