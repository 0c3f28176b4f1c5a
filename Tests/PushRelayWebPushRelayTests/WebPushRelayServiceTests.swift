import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelayDelivery
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestSupport
import PushRelayWebPushRelay
import Testing

@testable import PushRelayServer

/// `WebPushRelayService` driven directly, without HTTP: relayed messages through the real dispatcher to a scripted
/// provider on SQLite, counted under `webpush-relay` when `relay.daily_limit_per_token` is set; each
/// `WebPushRelayOutcome`, what reached the provider and the ledger, and the per-sender limit.
@Suite struct WebPushRelayServiceTests {
    struct Rig {
        let base: ScriptedProviderRig
        let service: WebPushRelayService
    }

    static func rig(
        _ steps: [ScriptedProvider.Step] = [.deliver],
        apnsProduction: String? = "scripted",
        apnsDevelopment: String? = "scripted",
        fcm: String? = "scripted",
        configure: (inout WebPushRelaySettings) -> Void = { _ in }
    ) throws -> Rig {
        let base = try ScriptedProviderRig(steps)
        var settings = WebPushRelaySettings()
        configure(&settings)
        let service = WebPushRelayService(
            settings: settings,
            apnsProduction: apnsProduction,
            apnsDevelopment: apnsDevelopment,
            fcm: fcm,
            dispatcher: base.dispatcher,
            work: BackgroundWork(logger: base.logger),
            clock: base.clock,
            logger: base.logger
        )
        return Rig(base: base, service: service)
    }

    static let apnsToken = "0a1b2c3d"
    static let production = RelayTarget(destination: .apns(production: true), token: apnsToken, extra: "acct-1")
    static let fcmTarget = RelayTarget(destination: .fcm, token: "fcm-token")
    static let body = Array("encrypted bytes".utf8)

    // MARK: - Accepted

    @Test func anAPNsMessageIsRelayedUncountedWithItsTTL() async throws {
        let rig = try Self.rig()
        let outcome = await rig.service.relay(Self.production, headers: WebPushHeaders(encoding: .aes128gcm, ttlSeconds: 60), body: Self.body)
        #expect(outcome == .accepted(messageID: "scripted:msg-1", ttl: 60))
        let delivery = try #require(rig.base.provider.deliveries.first)
        #expect(delivery.kind == .webPushRelay)
        #expect(delivery.platform == .ios)
        #expect(delivery.pushToken == Self.apnsToken)
        #expect(delivery.appID == WebPushRelayService.ledgerAppID)
        #expect(delivery.notification.apns?.payload["x"] == "acct-1")
        #expect(delivery.notification.apns?.payload["p"] == .string(ExtendedZ85.encode(Self.body)))
        // No daily limit: nothing counted, the delivery logged.
        #expect(try await rig.base.rateLimits(WebPushRelayService.account(Self.apnsToken), appID: WebPushRelayService.ledgerAppID).attempts == 0)
        // The relay's own account: the device's Home Assistant quota row is not the relay's.
        let log = try await rig.base.logged(WebPushRelayService.account(Self.apnsToken))
        #expect(log.map(\.kind) == [.webPushRelay])
        #expect(log.map(\.counted) == [false])
    }

    @Test func anFCMMessageIsRelayedAndWithoutATTLKeepsTheLongest() async throws {
        let rig = try Self.rig()
        let outcome = await rig.service.relay(Self.fcmTarget, headers: WebPushHeaders(encoding: .aes128gcm), body: Self.body)
        #expect(outcome == .accepted(messageID: "scripted:msg-1", ttl: WebPushHeaders.maxTTLSeconds))
        let delivery = try #require(rig.base.provider.deliveries.first)
        #expect(delivery.platform == .android)
        #expect(delivery.notification.fcmMessage["token"] == "fcm-token")
        #expect(delivery.notification.fcmMessage["data"]?["rfc"] == "1")
    }

    // MARK: - Refused before the pipeline

    @Test func anEmptyBodyIsRefusedWithoutASend() async throws {
        let rig = try Self.rig()
        #expect(await rig.service.relay(Self.production, headers: WebPushHeaders(encoding: .aes128gcm), body: []) == .emptyBody)
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aDestinationWithoutAProviderIsNotConfigured() async throws {
        let rig = try Self.rig(apnsProduction: nil, apnsDevelopment: nil, fcm: nil)
        for destination in [RelayTarget.Destination.apns(production: true), .apns(production: false), .fcm] {
            let target = RelayTarget(destination: destination, token: "t")
            #expect(await rig.service.relay(target, headers: WebPushHeaders(encoding: .aes128gcm), body: Self.body) == .notConfigured(destination))
        }
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aBodyTooLargeForTheProviderOnceEncodedIsRefused() async throws {
        let rig = try Self.rig()
        let big = [UInt8](repeating: 7, count: 4_000)
        for target in [Self.production, Self.fcmTarget] {
            guard case .payloadTooLarge(let message) = await rig.service.relay(target, headers: WebPushHeaders(encoding: .aes128gcm), body: big)
            else {
                Issue.record("expected the payload to be too large")
                return
            }
            #expect(message.contains("4000-byte"))
        }
        #expect(rig.base.provider.callCount == 0)
    }

    // MARK: - The pipeline's answers

    @Test func pastTheDailyLimitPerTokenNothingIsSentAndNoNotice() async throws {
        let rig = try Self.rig { $0.dailyLimitPerToken = 2 }
        let headers = WebPushHeaders(encoding: .aes128gcm)
        for _ in 0..<2 {
            guard case .accepted = await rig.service.relay(Self.fcmTarget, headers: headers, body: Self.body) else {
                Issue.record("expected a delivery within the limit")
                return
            }
        }
        #expect(await rig.service.relay(Self.fcmTarget, headers: headers, body: Self.body) == .tokenLimitReached(maximum: 2))
        #expect(rig.base.provider.callCount == 2, "a relayed token gets no rate-limit notice")
        let limits = try await rig.base.rateLimits(
            WebPushRelayService.account("fcm-token"),
            appID: WebPushRelayService.ledgerAppID,
            policy: QuotaPolicy(dailyLimit: 2)
        )
        #expect(limits.successful == 2 && limits.attempts == 3)
        #expect(try await rig.base.rateLimits("fcm-token", appID: nil).attempts == 0, "the device's own row is untouched")
        #expect(try await rig.base.logged(WebPushRelayService.account("fcm-token")).allSatisfy { $0.counted && $0.outcome == .delivered })
    }

    @Test func anInvalidTokenFailsAndWithADailyLimitIsThenAnsweredDead() async throws {
        let invalid = DeliveryFailure.invalidToken(reason: "Unregistered", message: "gone")
        // The sender's Unsubscribe-URL goes to a host not in relay.unsubscribe_allowed_hosts: no DELETE is sent.
        let rig = try Self.rig([.fail(invalid)]) { $0.dailyLimitPerToken = 10 }
        let headers = WebPushHeaders(encoding: .aes128gcm, unsubscribeURL: "https://sender.example/unsubscribe/1")
        #expect(await rig.service.relay(Self.production, headers: headers, body: Self.body) == .failed(invalid))
        #expect(
            await rig.service.relay(Self.production, headers: headers, body: Self.body) == .deadToken(provider: "scripted", reason: "Unregistered")
        )
        #expect(rig.base.provider.callCount == 1)
        #expect(try await rig.base.logged(WebPushRelayService.account(Self.apnsToken)).map(\.outcome) == [.invalidToken])
    }

    @Test func withoutADailyLimitTheDeadTokenMemoryIsNotRead() async throws {
        // Dead tokens are remembered only while the daily limit is on (docs/webpush-relay.md): uncounted relays skip the
        // storage entirely, so a token reported dead is tried again and an unreadable storage does not stop a relay.
        let invalid = DeliveryFailure.invalidToken(reason: "Unregistered", message: "gone")
        let rig = try Self.rig([.fail(invalid)])
        let headers = WebPushHeaders(encoding: .aes128gcm)
        #expect(await rig.service.relay(Self.production, headers: headers, body: Self.body) == .failed(invalid))
        rig.base.faults.mode = .fail
        #expect(await rig.service.relay(Self.production, headers: headers, body: Self.body) == .failed(invalid))
        #expect(rig.base.provider.callCount == 2)
    }

    @Test func aTransientFailureIsFailed() async throws {
        let down = DeliveryFailure.transient(reason: "ServiceUnavailable", message: "down", retryAfterSeconds: nil)
        let rig = try Self.rig([.fail(down)])
        guard
            case .failed(.transient(let reason, _, _)) = await rig.service.relay(
                Self.fcmTarget,
                headers: WebPushHeaders(encoding: .aes128gcm),
                body: Self.body
            )
        else {
            Issue.record("expected the provider's transient failure")
            return
        }
        #expect(reason == "ServiceUnavailable")
    }

    @Test func unreadableStorageIsStorageUnavailableAndNothingIsSent() async throws {
        let rig = try Self.rig { $0.dailyLimitPerToken = 10 }
        rig.base.faults.mode = .fail
        #expect(await rig.service.relay(Self.fcmTarget, headers: WebPushHeaders(encoding: .aes128gcm), body: Self.body) == .storageUnavailable)
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aStalledQuotaReservationIsStorageBusyAndNothingIsSent() async throws {
        let rig = try Self.rig { $0.dailyLimitPerToken = 10 }
        let service = rig.service
        let outcome = await rig.base.withStalledStorage {
            await service.relay(Self.fcmTarget, headers: WebPushHeaders(encoding: .aes128gcm), body: Self.body)
        }
        #expect(outcome == .storageBusy)
        #expect(rig.base.provider.callCount == 0)
    }

    // MARK: - Per-sender limit

    @Test func theSenderLimitCountsRequestsPerAddressAndMinute() async throws {
        let limited = try Self.rig { $0.maxRequestsPerMinutePerAddress = 2 }
        #expect(limited.service.senderLimit == 2)
        #expect(limited.service.admits(peer: "10.0.0.1"))
        #expect(limited.service.admits(peer: "10.0.0.1"))
        #expect(!limited.service.admits(peer: "10.0.0.1"))
        #expect(limited.service.admits(peer: "10.0.0.2"))
        limited.base.clock.advance(by: 60)
        #expect(limited.service.admits(peer: "10.0.0.1"), "a new minute")

        let unlimited = try Self.rig()
        #expect(unlimited.service.senderLimit == nil)
        #expect((0..<10).allSatisfy { _ in unlimited.service.admits(peer: "10.0.0.1") })
    }
}
