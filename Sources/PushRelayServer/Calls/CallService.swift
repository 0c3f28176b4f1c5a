import Foundation
import Logging
import PushRelayCore
import PushRelayStore

/// Devices and call-invite pushes (`/api/v1/*`), after the SignalWire push format.
final class CallService: Sendable {
    let store: any CallDeviceStorage
    let apiKeys: any APIKeyStorage
    /// Provider instances (dispatcher names) for iOS (VoIP pushes) and Android; nil when not configured.
    let apns: String?
    let fcm: String?
    let dispatcher: Dispatcher
    /// The websocket channels: a device with a live, confirming channel is rung there first.
    let hub: LocalPushHub?
    let channelConfirmTimeout: Duration
    /// Failed API keys count against the address, with every other failed credential check.
    let limiter: FailedAuthLimiter
    let clock: any WallClock
    let logger: Logger

    init(
        store: any CallDeviceStorage,
        apiKeys: any APIKeyStorage,
        apns: String?,
        fcm: String?,
        dispatcher: Dispatcher,
        hub: LocalPushHub?,
        limiter: FailedAuthLimiter,
        channelConfirmTimeoutMs: Int,
        clock: any WallClock,
        logger: Logger
    ) {
        self.hub = hub
        self.limiter = limiter
        self.channelConfirmTimeout = .milliseconds(channelConfirmTimeoutMs)
        self.store = store
        self.apiKeys = apiKeys
        self.apns = apns
        self.fcm = fcm
        self.dispatcher = dispatcher
        self.clock = clock
        self.logger = logger
    }

    /// The API key id for an `Authorization: Bearer` header, or 401 (429 while the address is blocked). A key is
    /// looked up by its SHA-256 only, so the lookup's timing says nothing about the key.
    func authenticate(_ authorization: String?, peer: String) async throws(APIError) -> Int64 {
        let now = clock.now()
        guard !limiter.isBlocked(peer, now: now) else {
            throw APIError.tooManyFailedAttempts
        }
        let unauthorized = APIError(
            .unauthorized,
            "Unauthorized",
            "Send a valid API key as 'Authorization: Bearer <key>' (create one with `pushrelay api-key create`).",
            headers: [.wwwAuthenticate: "Bearer"]
        )
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { throw unauthorized }
        let key = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let id: Int64?
        do {
            id = try await apiKeys.apiKeyID(forKey: key)
        } catch {
            throw storageFailure(error)
        }
        guard let id else {
            limiter.recordFailure(peer, now: now)
            throw unauthorized
        }
        return id
    }

    struct Registered: Sendable {
        var deviceID: String
        var key: [UInt8]
    }

    func register(
        apiKeyID: Int64,
        platform: HAPlatform,
        appID: String,
        pushToken: String,
        voipToken: String?,
        label: String?,
        webhookID: String?
    ) async throws(APIError) -> Registered {
        let device = CallDevice(
            id: RandomID.uuid(),
            apiKeyID: apiKeyID,
            platform: platform,
            appID: appID,
            pushToken: pushToken,
            voipToken: voipToken,
            label: label,
            webhookID: webhookID,
            encryptionKey: CallInviteSealer.newKey()
        )
        do {
            try await store.addDevice(device, now: clock.now())
        } catch {
            throw storageFailure(error)
        }
        return Registered(deviceID: device.id, key: device.encryptionKey)
    }

    func delete(deviceID: String, apiKeyID: Int64) async throws(APIError) {
        let deleted: Bool
        do {
            deleted = try await store.deleteDevice(id: deviceID, apiKeyID: apiKeyID)
        } catch {
            throw storageFailure(error)
        }
        guard deleted else { throw Self.unknownDevice(deviceID) }
    }

    func rotateKey(deviceID: String, apiKeyID: Int64) async throws(APIError) -> [UInt8] {
        let key = CallInviteSealer.newKey()
        let rotated: Bool
        do {
            rotated = try await store.rotateKey(id: deviceID, apiKeyID: apiKeyID, key: key, now: clock.now())
        } catch {
            throw storageFailure(error)
        }
        guard rotated else { throw Self.unknownDevice(deviceID) }
        return key
    }

    struct CallRequest: Sendable {
        var deviceID: String
        var callerName: String
        var callerID: String
        var title: String?
        var withVideo: Bool
        var invite: String
    }

    struct CallSent: Sendable {
        var notificationUUID: String
        var deliveredVia: String
    }

    func call(_ c: CallRequest, apiKeyID: Int64) async throws(APIError) -> CallSent {
        let found: CallDevice?
        do {
            found = try await store.device(id: c.deviceID, apiKeyID: apiKeyID)
        } catch {
            throw storageFailure(error)
        }
        guard let device = found else { throw Self.unknownDevice(c.deviceID) }
        if let reason = device.deadReason {
            throw APIError(
                .gone,
                "InvalidToken",
                "The device's push token is no longer valid (\(reason)); register the device again.",
                fields: ["errorCode": .string(reason)]
            )
        }
        let sealed: CallInviteSealer.Sealed
        do {
            sealed = try CallInviteSealer.seal(Array(c.invite.utf8), key: device.encryptionKey)
        } catch {
            throw APIError(.internalServerError, "InternalError", "Could not encrypt the invite for this device.")
        }
        let invite = CallInvite(
            notificationUUID: RandomID.uuid(),
            callerName: c.callerName,
            callerID: c.callerID,
            title: c.title ?? c.callerName,
            withVideo: c.withVideo,
            inviteCiphertext: sealed.ciphertext,
            iv: sealed.iv,
            tag: sealed.tag
        )
        if await ringOverChannel(invite, device: device) {
            return CallSent(notificationUUID: invite.notificationUUID, deliveredVia: "websocket")
        }
        let provider: String
        let notification: TranslatedNotification
        let token: String
        let via: String
        do {
            switch device.platform {
            case .ios:
                guard let r = apns else { throw APIError.configuration("VoIP pushes to iOS are not configured on this server (voip.apns_provider).") }
                guard let voip = device.voipToken else {
                    throw APIError(
                        .unprocessableContent,
                        "NoVoIPToken",
                        "This iOS device was registered without a voip_token; register it again with its PushKit token."
                    )
                }
                provider = r
                token = voip
                via = "apns"
                notification = try CallInvitePush.apns(invite)
            case .android:
                guard let r = fcm else {
                    throw APIError.configuration("Call pushes to Android are not configured on this server (voip.fcm_provider).")
                }
                provider = r
                token = device.pushToken
                via = "fcm"
                notification = try CallInvitePush.fcm(invite, token: device.pushToken)
            }
        } catch let e as APIError {
            throw e
        } catch let e as RelayPayloadError {
            throw APIError(
                .contentTooLarge,
                "PayloadTooLarge",
                "The invite, sealed for the device, becomes a \(e.size)-byte \(e.provider) payload; \(e.provider) accepts at most \(e.limit) bytes. Send a shorter invite."
            )
        } catch {
            throw APIError(.internalServerError, "InternalError", "Could not build the call push.")
        }
        // The device's own dead flag is checked above; calls are not counted against a daily quota.
        let delivery = Delivery(platform: device.platform, pushToken: token, appID: device.appID, notification: notification, kind: .callInvite)
        switch await dispatcher.dispatch(Dispatch(delivery, provider: provider, quota: .uncounted(checkDead: false))) {
        case .delivered:
            return CallSent(notificationUUID: invite.notificationUUID, deliveredVia: via)
        case .failed(let failure, _):
            logger.notice(
                "call push failed",
                metadata: ["device": .string(device.id), "token": .string(TokenDisplay.short(token)), "reason": .string(failure.message)]
            )
            if case .invalidToken(let reason, _) = failure {
                do {
                    try await store.markDead(id: device.id, reason: reason, now: clock.now())
                } catch {
                    logger.error("could not mark the device dead", metadata: ["device": .string(device.id), "error": .string("\(error)")])
                }
            }
            throw WebPushRelayService.error(failure)
        case .dead(let dead, _):
            throw APIError(
                .gone,
                "InvalidToken",
                "The device's push token is no longer valid (\(dead.reason)); register the device again.",
                fields: ["errorCode": .string(dead.reason)]
            )
        case .refused(let r):
            throw APIError(.tooManyRequests, "RateLimited", "This device has reached its \(r.maximum) pushes for today.")
        case .storageUnavailable:
            throw APIError.storageUnavailable
        }
    }

    /// As SignalWire does: no push while the device has a live websocket channel. The invite goes over a channel
    /// that confirms (`support_confirm`) as an event with `type: "call_invite"` and a `hass_confirm_id`; without a
    /// confirm in `voip.channel_confirm_timeout_ms` the push is sent after all.
    private func ringOverChannel(_ invite: CallInvite, device: CallDevice) async -> Bool {
        guard let hub, let sub = hub.subscription(pushToken: device.pushToken, webhookID: device.webhookID), sub.supportConfirm else { return false }
        // A channel opened with a channel token serves a webhook id, not a token: ring there only when Home Assistant
        // has bound the device's push token to that webhook id (an API key holder cannot name someone else's).
        if sub.pushToken == nil, await hub.bindings.verdict(pushToken: device.pushToken, webhookID: sub.webhookID) != .bound { return false }
        let confirmID = RandomID.hex128()
        guard case .object(var event) = invite.payload else { return false }
        event["hass_confirm_id"] = .string(confirmID)
        let text = LocalPushWire.event(subscription: sub.id, .object(event))
        if await hub.callWaiters.deliver(text, id: confirmID, on: sub, timeout: channelConfirmTimeout) { return true }
        logger.info("call invite not confirmed on the websocket channel; sending the push", metadata: ["device": .string(device.id)])
        return false
    }

    static func unknownDevice(_ id: String) -> APIError {
        APIError(.notFound, "UnknownDevice", "No device '\(id)' is registered with this API key.")
    }

    private func storageFailure(_ error: any Error) -> APIError {
        logger.error("VoIP storage failed", metadata: ["error": .string("\(error)")])
        return .storageUnavailable
    }
}
