import Foundation
import Logging
import PushRelayCore
import PushRelayDelivery
import PushRelayHTTP
import PushRelaySecurity
import PushRelayStore

/// Why a call-service request was refused. `CallRoutes` turns it into the HTTP answer.
package enum CallError: Error, Sendable, Equatable {
    /// The address has failed too many credential checks; it is blocked for a while.
    case tooManyFailedAttempts
    /// No API key, or not one this server issued.
    case unauthorized
    case storageUnavailable
    /// The storage did not answer within its share of the delivery deadline; nothing was sent.
    case storageBusy
    /// No such device under this API key.
    case unknownDevice(String)
    /// Another API key registered this token first (`CallDeviceRegistration`); nothing was stored.
    case tokenHeldByAnotherKey(field: String)
    /// The device's push token was reported dead; it must register again.
    case deadToken(reason: String)
    /// Calls to this platform have no provider on this server (`calls.apns_provider` / `calls.fcm_provider`).
    case notConfigured(HAPlatform)
    /// An iOS device registered without its PushKit token.
    case noVoIPToken
    /// The sealed invite would be larger than the provider takes.
    case inviteTooLarge(size: Int, provider: String, limit: Int)
    /// Sealing or building the push failed (a bug, not the caller's doing).
    case internalError(String)
    /// The provider refused or failed.
    case failed(DeliveryFailure)
}

/// Devices and call-invite pushes (`/api/v1/*`), after the SignalWire push format. Throws `CallError`; only
/// `CallRoutes` knows HTTP.
package final class CallService: Sendable {
    package let store: any CallDeviceStorage
    package let apiKeys: any APIKeyStorage
    /// Provider instances (dispatcher names) for iOS (VoIP pushes) and Android; nil when not configured.
    package let apns: String?
    package let fcm: String?
    package let dispatcher: Dispatcher
    /// The push channels: a device with a live, confirming channel is rung there first.
    package let channel: CallChannel?
    /// Failed API keys count against the address, with every other failed credential check.
    package let limiter: FailedAuthLimiter
    package let clock: any TimePort
    package let logger: Logger

    package init(
        store: any CallDeviceStorage,
        apiKeys: any APIKeyStorage,
        apns: String?,
        fcm: String?,
        dispatcher: Dispatcher,
        channel: CallChannel?,
        limiter: FailedAuthLimiter,
        clock: any TimePort,
        logger: Logger
    ) {
        self.channel = channel
        self.limiter = limiter
        self.store = store
        self.apiKeys = apiKeys
        self.apns = apns
        self.fcm = fcm
        self.dispatcher = dispatcher
        self.clock = clock
        self.logger = logger
    }

    /// The API key id for an `Authorization: Bearer` header (`unauthorized`; `tooManyFailedAttempts` while the
    /// address is blocked). A key is looked up by its SHA-256 only, so the lookup's timing says nothing about the key.
    package func authenticate(_ authorization: String?, peer: String) async throws(CallError) -> Int64 {
        let now = clock.now()
        guard !limiter.isBlocked(peer, now: now) else { throw .tooManyFailedAttempts }
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { throw .unauthorized }
        let key = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let id: Int64?
        do {
            id = try await apiKeys.apiKeyID(forKey: key)
        } catch {
            throw storageFailure(error)
        }
        guard let id else {
            limiter.recordFailure(peer, now: now)
            throw .unauthorized
        }
        return id
    }

    package struct Registered: Sendable {
        package var deviceID: String
        package var key: [UInt8]
    }

    /// Registers a device under `apiKeyID` with a new key. A token another live API key registered first is refused
    /// (`tokenHeldByAnotherKey`): that key's devices alone are rung and seal Home Assistant notifications to it. The
    /// same key may register its token again; the newest device's key then seals.
    package func register(
        apiKeyID: Int64,
        platform: HAPlatform,
        appID: String,
        pushToken: String,
        voipToken: String?,
        label: String?,
        webhookID: String?
    ) async throws(CallError) -> Registered {
        let device = CallDevice(
            id: RandomID.uuid(),
            apiKeyID: apiKeyID,
            platform: platform,
            appID: appID,
            pushToken: pushToken,
            voipToken: voipToken,
            label: label,
            webhookID: webhookID,
            encryptionKey: DeviceCipher.newKey()
        )
        let registration: CallDeviceRegistration
        do {
            registration = try await store.addDevice(device, now: clock.now())
        } catch {
            throw storageFailure(error)
        }
        switch registration {
        case .added: return Registered(deviceID: device.id, key: device.encryptionKey)
        case .pushTokenHeldByAnotherKey: throw .tokenHeldByAnotherKey(field: "push_token")
        case .voipTokenHeldByAnotherKey: throw .tokenHeldByAnotherKey(field: "voip_token")
        }
    }

    package func delete(deviceID: String, apiKeyID: Int64) async throws(CallError) {
        let deleted: Bool
        do {
            deleted = try await store.deleteDevice(id: deviceID, apiKeyID: apiKeyID)
        } catch {
            throw storageFailure(error)
        }
        guard deleted else { throw .unknownDevice(deviceID) }
    }

    package func rotateKey(deviceID: String, apiKeyID: Int64) async throws(CallError) -> [UInt8] {
        let key = DeviceCipher.newKey()
        let rotated: Bool
        do {
            rotated = try await store.rotateKey(id: deviceID, apiKeyID: apiKeyID, key: key, now: clock.now())
        } catch {
            throw storageFailure(error)
        }
        guard rotated else { throw .unknownDevice(deviceID) }
        return key
    }

    package struct CallRequest: Sendable {
        package var deviceID: String
        package var callerName: String
        package var callerID: String
        package var title: String?
        package var withVideo: Bool
        package var invite: String

        package init(deviceID: String, callerName: String, callerID: String, title: String?, withVideo: Bool, invite: String) {

            self.deviceID = deviceID

            self.callerName = callerName

            self.callerID = callerID

            self.title = title

            self.withVideo = withVideo

            self.invite = invite

        }
    }

    package struct CallSent: Sendable {
        package var notificationUUID: String
        package var deliveredVia: String
    }

    package func call(_ c: CallRequest, apiKeyID: Int64) async throws(CallError) -> CallSent {
        let found: CallDevice?
        do {
            found = try await store.device(id: c.deviceID, apiKeyID: apiKeyID)
        } catch {
            throw storageFailure(error)
        }
        guard let device = found else { throw .unknownDevice(c.deviceID) }
        let sealed: DeviceCipher.Sealed
        do {
            sealed = try DeviceCipher.seal(Array(c.invite.utf8), key: device.encryptionKey)
        } catch {
            throw .internalError("Could not encrypt the invite for this device.")
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
        if let channel, await channel.ring(invite, device: device) {
            return CallSent(notificationUUID: invite.notificationUUID, deliveredVia: "websocket")
        }
        let provider: String
        let notification: TranslatedNotification
        let token: String
        let via: String
        switch device.platform {
        case .ios:
            guard let r = apns else { throw .notConfigured(.ios) }
            guard let voip = device.voipToken else { throw .noVoIPToken }
            provider = r
            token = voip
            via = "apns"
        case .android:
            guard let r = fcm else { throw .notConfigured(.android) }
            provider = r
            token = device.pushToken
            via = "fcm"
        }
        do throws(CallInviteTooLarge) {
            notification = device.platform == .ios ? try CallInvitePush.apns(invite) : try CallInvitePush.fcm(invite, token: device.pushToken)
        } catch {
            throw .inviteTooLarge(size: error.size, provider: error.provider, limit: error.limit)
        }
        // Calls are not counted against a daily quota. A token a provider reported dead (to a call or to any other
        // notification) is answered dead without a send: the pipeline's dead-token memory is the one owner of that.
        let delivery = Delivery(platform: device.platform, pushToken: token, appID: device.appID, notification: notification, kind: .callInvite)
        switch await dispatcher.dispatch(Dispatch(delivery, provider: provider, quota: .uncounted(checkDead: true), client: ClientAddress.current)) {
        case .delivered:
            return CallSent(notificationUUID: invite.notificationUUID, deliveredVia: via)
        case .failed(let failure, _):
            logger.notice(
                "call push failed",
                metadata: ["device": .string(device.id), "token": .string(TokenDisplay.short(token)), "reason": .string(failure.message)]
            )
            // An invalid token is now remembered as dead by the pipeline: the next call answers 410 without a send.
            throw .failed(failure)
        case .dead(let dead, _):
            throw .deadToken(reason: dead.reason)
        case .storageBusy:
            throw .storageBusy
        case .refused, .storageUnavailable:
            // Calls are dispatched uncounted: no quota refuses them. The storage could still fail.
            throw .storageUnavailable
        }
    }

    private func storageFailure(_ error: any Error) -> CallError {
        logger.error("call storage failed", metadata: ["error": .string("\(error)")])
        return .storageUnavailable
    }
}
