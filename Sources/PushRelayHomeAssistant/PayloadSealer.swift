import Logging
import PushRelayCore
import PushRelaySecurity
import PushRelayStore

/// `encrypt_payloads`: seals a notification for a device registered with `POST /api/v1/devices`, so Apple and Google
/// see only a generic alert.
package struct PayloadSealer: Sendable {
    /// Why a notification could not be sealed (it is then not sent).
    package enum Failure: Error {
        /// The device's key could not be read.
        case storageUnavailable
        /// Encryption failed.
        case encryptionFailed
    }

    /// The alert Apple and Google see for a sealed notification.
    static let sealedAlertText = "New notification"

    package let apps: AppProviders
    package let devices: any CallDeviceStorage
    package let logger: Logger

    package init(apps: AppProviders, devices: any CallDeviceStorage, logger: Logger) {
        self.apps = apps
        self.devices = devices
        self.logger = logger
    }

    /// Seals `t` when the app's `apps` entry asks for it and the push token belongs to a registered device; otherwise returns
    /// it unchanged.
    func sealIfRegistered(
        _ t: TranslatedNotification,
        _ n: HANotification,
        platform: HAPlatform
    ) async throws(Failure) -> TranslatedNotification {
        guard apps.entry(for: n.registrationInfo.appID)?.encryptPayloads == true, EncryptedNotification.canSeal(t, platform: platform)
        else { return t }
        let key: [UInt8]?
        do {
            key = try await devices.encryptionKey(forPushToken: n.pushToken)
        } catch {
            logger.error("device key lookup failed", metadata: ["error": .string("\(error)")])
            throw .storageUnavailable
        }
        guard let key else { return t }
        do {
            let s = try DeviceCipher.seal(EncryptedNotification.plaintext(t, platform: platform), key: key)
            return EncryptedNotification.apply(
                t,
                platform: platform,
                sealed: SealedPayload(ciphertext: s.ciphertext, iv: s.iv, tag: s.tag),
                alertText: Self.sealedAlertText
            )
        } catch {
            throw .encryptionFailed
        }
    }
}
