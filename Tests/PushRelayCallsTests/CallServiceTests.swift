import Foundation
import PushRelayCalls
import PushRelayCore
import PushRelayPushChannel
import PushRelaySecurity
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestSupport
import Testing

@testable import PushRelayServer

/// `CallService` driven directly, without HTTP: API keys and devices on SQLite, call invites through the real
/// dispatcher to a scripted provider (uncounted, the dead-token memory checked), or on the device's channel when a
/// fake `PushChannelPort` confirms; each `CallError`, what reached the provider and the delivery log.
@Suite struct CallServiceTests {
    /// The push channel as `CallChannel` sees it: confirms or not, and records what it was asked to ring.
    final class FakeChannel: PushChannelPort {
        let confirms: Bool
        let rung = Locked<[(event: [String: JSONValue], pushToken: String, webhookID: String?)]>([])

        init(confirms: Bool) { self.confirms = confirms }

        func deliver(_ n: HANotification, platform: HAPlatform, toProvisional: Bool) async -> String? {
            Issue.record("calls never deliver a Home Assistant notification")
            return nil
        }

        func observe(_ n: HANotification, evidence: PushChannelPairEvidence) async {
            Issue.record("calls never observe a Home Assistant notification")
        }

        func deliverConfirmed(_ event: [String: JSONValue], pushToken: String, webhookID: String?, timeout: Duration) async -> Bool {
            rung.withLock { $0.append((event, pushToken, webhookID)) }
            return confirms
        }
    }

    struct Rig {
        let base: ScriptedProviderRig
        let service: CallService
        let channel: FakeChannel?
        let apiKey: String
        let apiKeyID: Int64
    }

    static func rig(
        _ steps: [ScriptedProvider.Step] = [.deliver],
        apns: String? = "scripted",
        fcm: String? = "scripted",
        channel: FakeChannel? = nil,
        failedAuthLimit: Int = 3
    ) async throws -> Rig {
        let base = try ScriptedProviderRig(steps)
        let key = try await base.storage.apiKeys.createAPIKey(label: "test", now: base.clock.now())
        let service = CallService(
            store: base.storage.devices,
            apiKeys: base.storage.apiKeys,
            apns: apns,
            fcm: fcm,
            dispatcher: base.dispatcher,
            channel: channel.map { CallChannel(pushChannel: $0, confirmTimeout: .seconds(10), logger: base.logger) },
            limiter: FailedAuthLimiter(limit: failedAuthLimit),
            clock: base.clock,
            logger: base.logger
        )
        return Rig(base: base, service: service, channel: channel, apiKey: key.key, apiKeyID: key.id)
    }

    static func register(_ rig: Rig, platform: HAPlatform, voipToken: String? = "voip-1") async throws -> CallService.Registered {
        try await rig.service.register(
            apiKeyID: rig.apiKeyID,
            platform: platform,
            appID: "io.app",
            pushToken: "push-1",
            voipToken: voipToken,
            label: "phone",
            webhookID: "hook-1"
        )
    }

    static func call(_ deviceID: String, invite: String = "v=0 o=- 1 1 IN IP4 127.0.0.1") -> CallService.CallRequest {
        CallService.CallRequest(deviceID: deviceID, callerName: "Alice", callerID: "alice", title: nil, withVideo: false, invite: invite)
    }

    // MARK: - API keys

    @Test func anIssuedKeyAuthenticatesAndOthersAreUnauthorizedUntilTheAddressIsBlocked() async throws {
        let rig = try await Self.rig(failedAuthLimit: 2)
        #expect(try await rig.service.authenticate("Bearer \(rig.apiKey)", peer: "10.0.0.1") == rig.apiKeyID)
        #expect(try await rig.service.authenticate("bearer \(rig.apiKey)", peer: "10.0.0.1") == rig.apiKeyID)
        // A malformed header is not a guess: it does not count against the address.
        for header in [nil, "Basic abc", "Bearer"] {
            await #expect(throws: CallError.unauthorized) { try await rig.service.authenticate(header, peer: "10.0.0.1") }
        }
        await #expect(throws: CallError.unauthorized) { try await rig.service.authenticate("Bearer wrong", peer: "10.0.0.1") }
        await #expect(throws: CallError.unauthorized) { try await rig.service.authenticate("Bearer wrong", peer: "10.0.0.1") }
        // Blocked now, even with the right key; another address is not.
        await #expect(throws: CallError.tooManyFailedAttempts) {
            try await rig.service.authenticate("Bearer \(rig.apiKey)", peer: "10.0.0.1")
        }
        #expect(try await rig.service.authenticate("Bearer \(rig.apiKey)", peer: "10.0.0.2") == rig.apiKeyID)
    }

    // MARK: - Devices

    @Test func aRegisteredDeviceCanBeRekeyedAndDeletedUnderItsOwnKeyOnly() async throws {
        let rig = try await Self.rig()
        let registered = try await Self.register(rig, platform: .android)
        #expect(registered.key.count == 32)
        let stored = try #require(try await rig.base.storage.devices.device(id: registered.deviceID, apiKeyID: rig.apiKeyID))
        #expect(stored.encryptionKey == registered.key)
        #expect(stored.webhookID == "hook-1")

        let other = try await rig.base.storage.apiKeys.createAPIKey(label: "other", now: rig.base.clock.now())
        await #expect(throws: CallError.unknownDevice(registered.deviceID)) {
            try await rig.service.rotateKey(deviceID: registered.deviceID, apiKeyID: other.id)
        }
        await #expect(throws: CallError.unknownDevice(registered.deviceID)) {
            try await rig.service.delete(deviceID: registered.deviceID, apiKeyID: other.id)
        }

        let rotated = try await rig.service.rotateKey(deviceID: registered.deviceID, apiKeyID: rig.apiKeyID)
        #expect(rotated.count == 32 && rotated != registered.key)
        #expect(try await rig.base.storage.devices.device(id: registered.deviceID, apiKeyID: rig.apiKeyID)?.encryptionKey == rotated)

        try await rig.service.delete(deviceID: registered.deviceID, apiKeyID: rig.apiKeyID)
        await #expect(throws: CallError.unknownDevice(registered.deviceID)) {
            try await rig.service.delete(deviceID: registered.deviceID, apiKeyID: rig.apiKeyID)
        }
        await #expect(throws: CallError.unknownDevice(registered.deviceID)) {
            try await rig.service.call(Self.call(registered.deviceID), apiKeyID: rig.apiKeyID)
        }
    }

    // MARK: - Calls by push

    @Test func anAndroidCallGoesToFCMUncountedAndIsLogged() async throws {
        let rig = try await Self.rig()
        let device = try await Self.register(rig, platform: .android)
        let sent = try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID)
        #expect(sent.deliveredVia == "fcm")
        #expect(!sent.notificationUUID.isEmpty)
        let delivery = try #require(rig.base.provider.deliveries.first)
        #expect(delivery.kind == .callInvite)
        #expect(delivery.pushToken == "push-1")
        #expect(delivery.platform == .android)
        #expect(try await rig.base.rateLimits("push-1", appID: "io.app").attempts == 0)
        let log = try await rig.base.logged("push-1")
        #expect(log.map(\.kind) == [.callInvite])
        #expect(log.map(\.counted) == [false])
        #expect(log.map(\.outcome) == [.delivered])
    }

    @Test func anIOSCallGoesToItsPushKitToken() async throws {
        let rig = try await Self.rig()
        let device = try await Self.register(rig, platform: .ios, voipToken: "voip-abc")
        let sent = try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID)
        #expect(sent.deliveredVia == "apns")
        #expect(rig.base.provider.deliveries.map(\.pushToken) == ["voip-abc"])
        #expect(rig.base.provider.deliveries.first?.notification.apns != nil)
    }

    @Test func anIOSDeviceWithoutAPushKitTokenCannotBeCalled() async throws {
        let rig = try await Self.rig()
        let device = try await Self.register(rig, platform: .ios, voipToken: nil)
        await #expect(throws: CallError.noVoIPToken) { try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID) }
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aPlatformWithoutAProviderIsNotConfigured() async throws {
        let rig = try await Self.rig(apns: nil, fcm: nil)
        let ios = try await Self.register(rig, platform: .ios)
        let android = try await Self.register(rig, platform: .android)
        await #expect(throws: CallError.notConfigured(.ios)) { try await rig.service.call(Self.call(ios.deviceID), apiKeyID: rig.apiKeyID) }
        await #expect(throws: CallError.notConfigured(.android)) {
            try await rig.service.call(Self.call(android.deviceID), apiKeyID: rig.apiKeyID)
        }
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func anInviteTooLargeForTheProviderIsRefusedBeforeTheSend() async throws {
        let rig = try await Self.rig()
        let device = try await Self.register(rig, platform: .android)
        // Stored zlib blocks do not compress: the sealed invite is larger than the text.
        let call = Self.call(device.deviceID, invite: String(repeating: "a", count: 6_000))
        do {
            _ = try await rig.service.call(call, apiKeyID: rig.apiKeyID)
            Issue.record("expected the invite to be too large")
        } catch {
            guard case .inviteTooLarge(let size, let provider, let limit) = error else {
                Issue.record("expected inviteTooLarge, got \(error)")
                return
            }
            #expect(provider == "FCM")
            #expect(size > limit)
        }
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aDeviceKeyThatCannotSealIsAnInternalError() async throws {
        let rig = try await Self.rig()
        let device = CallDevice(
            id: "bad-key",
            apiKeyID: rig.apiKeyID,
            platform: .android,
            appID: "io.app",
            pushToken: "push-1",
            voipToken: nil,
            label: nil,
            encryptionKey: [1, 2, 3]
        )
        try await rig.base.storage.devices.addDevice(device, now: rig.base.clock.now())
        do {
            _ = try await rig.service.call(Self.call("bad-key"), apiKeyID: rig.apiKeyID)
            Issue.record("expected an internal error")
        } catch {
            guard case .internalError = error else {
                Issue.record("expected internalError, got \(error)")
                return
            }
        }
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func anInvalidTokenFailsOnceAndIsThenAnsweredDeadWithoutASend() async throws {
        let invalid = DeliveryFailure.invalidToken(reason: "Unregistered", message: "gone")
        let rig = try await Self.rig([.fail(invalid)])
        let device = try await Self.register(rig, platform: .ios)
        await #expect(throws: CallError.failed(invalid)) { try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID) }
        await #expect(throws: CallError.deadToken(reason: "Unregistered")) {
            try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID)
        }
        #expect(rig.base.provider.callCount == 1)
        #expect(try await rig.base.logged("voip-1").map(\.outcome) == [.invalidToken])
    }

    @Test func aTransientFailureIsFailedAndNotRemembered() async throws {
        let down = DeliveryFailure.transient(reason: "ServiceUnavailable", message: "down", retryAfterSeconds: nil)
        let rig = try await Self.rig([.fail(down), .deliver])
        let device = try await Self.register(rig, platform: .android)
        do {
            _ = try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID)
            Issue.record("expected the provider's failure")
        } catch {
            guard case .failed(.transient(let reason, _, _)) = error else {
                Issue.record("expected a transient failure, got \(error)")
                return
            }
            #expect(reason == "ServiceUnavailable")
        }
        #expect(try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID).deliveredVia == "fcm")
        #expect(rig.base.provider.callCount == 2)
    }

    @Test func unreadableStorageIsStorageUnavailableAndNothingIsSent() async throws {
        let rig = try await Self.rig()
        let device = try await Self.register(rig, platform: .android)
        // The dead-token memory cannot be read.
        rig.base.faults.mode = .fail
        await #expect(throws: CallError.storageUnavailable) {
            try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID)
        }
        #expect(rig.base.provider.callCount == 0)
    }

    @Test func aStalledDeadTokenCheckIsStorageBusyAndNothingIsSent() async throws {
        let rig = try await Self.rig()
        let device = try await Self.register(rig, platform: .android)
        let service = rig.service
        let apiKeyID = rig.apiKeyID
        let result = await rig.base.withStalledStorage { () -> CallError? in
            do throws(CallError) {
                _ = try await service.call(Self.call(device.deviceID), apiKeyID: apiKeyID)
                return nil
            } catch {
                return error
            }
        }
        #expect(result == .storageBusy)
        #expect(rig.base.provider.callCount == 0)
    }

    // MARK: - Calls on the channel

    @Test func aDeviceThatConfirmsOnItsChannelIsRungThereWithoutAPush() async throws {
        let channel = FakeChannel(confirms: true)
        let rig = try await Self.rig(channel: channel)
        let device = try await Self.register(rig, platform: .android)
        let sent = try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID)
        #expect(sent.deliveredVia == "websocket")
        let rung = channel.rung.withLock { $0 }
        #expect(rung.count == 1)
        #expect(rung.first?.pushToken == "push-1")
        #expect(rung.first?.webhookID == "hook-1")
        #expect(rung.first?.event["type"] == "call_invite")
        #expect(rung.first?.event["notification_uuid"] == .string(sent.notificationUUID))
        #expect(rig.base.provider.callCount == 0)
        #expect(try await rig.base.logged("push-1").isEmpty)
    }

    @Test func withoutAConfirmTheCallIsPushedAfterAll() async throws {
        let channel = FakeChannel(confirms: false)
        let rig = try await Self.rig(channel: channel)
        let device = try await Self.register(rig, platform: .ios)
        #expect(try await rig.service.call(Self.call(device.deviceID), apiKeyID: rig.apiKeyID).deliveredVia == "apns")
        #expect(channel.rung.withLock { $0.count } == 1)
        #expect(rig.base.provider.callCount == 1)
    }
}
