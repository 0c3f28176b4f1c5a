import PushRelayCore
import PushRelayStore

extension HomeAssistantService {
    /// The alert Apple and Google see for a sealed notification.
    static let sealedAlertText = "New notification"

    /// `encrypt_payloads`: seals the notification when the app's route asks for it and the push token belongs to a
    /// device registered with `POST /api/v1/devices`. Otherwise returns it unchanged.
    func sealIfRegistered(_ t: TranslatedNotification, _ n: HANotification, platform: HAPlatform) async throws(APIError) -> TranslatedNotification {
        guard registry.routes.route(for: n.registrationInfo.appID)?.encryptPayloads == true,
              EncryptedNotification.canSeal(t, platform: platform)
        else { return t }
        let key: [UInt8]?
        do {
            key = try await VoIPStore(database: store.database).encryptionKey(forPushToken: n.pushToken)
        } catch {
            logger.error("device key lookup failed", metadata: ["error": .string("\(error)")])
            throw APIError(.serviceUnavailable, "StorageUnavailable", "PushRelay could not read its device database, so the notification was not sent; try again shortly.",
                           headers: [.retryAfter: "5"])
        }
        guard let key else { return t }
        do {
            let s = try CallInviteSealer.seal(EncryptedNotification.plaintext(t, platform: platform), key: key)
            return EncryptedNotification.apply(t, platform: platform, sealed: SealedPayload(ciphertext: s.ciphertext, iv: s.iv, tag: s.tag),
                                               alertText: Self.sealedAlertText)
        } catch {
            throw APIError(.internalServerError, "InternalError", "Could not encrypt the notification for this device.")
        }
    }
}
