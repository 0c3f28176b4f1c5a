/// The call-invite push as each provider takes it: an APNs VoIP (PushKit) push, or a high-priority FCM message.
public enum CallInvitePush {
    /// APNs' limit for VoIP pushes.
    public static let apnsVoIPLimit = 5120
    public static let fcmLimit = 4096

    /// iOS: a PushKit VoIP push, `{"aps":{"alert":{…payload}}}`, priority 10, expiration 0 (ring now or never).
    public static func apns(_ invite: CallInvite) throws(CallInviteTooLarge) -> TranslatedNotification {
        let payload: JSONValue = ["aps": ["alert": invite.payload]]
        let size = JSONWriter.bytes(payload).count
        guard size <= apnsVoIPLimit else {
            throw CallInviteTooLarge(size: size, limit: apnsVoIPLimit, provider: "APNs VoIP", inviteBytes: invite.inviteCiphertext.utf8.count)
        }
        return TranslatedNotification(
            fcmMessage: .object([:]),
            apns: APNsRequest(headers: ["apns-push-type": "voip", "apns-priority": "10", "apns-expiration": "0"], payload: payload)
        )
    }

    /// Android: FCM high priority, `{"notification":{"body":"<payload JSON>"},"data":{}}`.
    public static func fcm(_ invite: CallInvite, token: String) throws(CallInviteTooLarge) -> TranslatedNotification {
        let body = invite.payload.jsonString()
        guard body.utf8.count + 4 <= fcmLimit else {
            throw CallInviteTooLarge(size: body.utf8.count + 4, limit: fcmLimit, provider: "FCM", inviteBytes: invite.inviteCiphertext.utf8.count)
        }
        return TranslatedNotification(fcmMessage: [
            "token": .string(token),
            "notification": ["body": .string(body)],
            "data": .object([:]),
            "android": ["priority": "high"],
        ])
    }
}
