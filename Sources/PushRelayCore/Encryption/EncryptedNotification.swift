/// A payload sealed for one device: base64 AES-256-GCM ciphertext of a zlib stream, its nonce and its tag.
public struct SealedPayload: Sendable, Equatable {
    public var ciphertext: String
    public var iv: String
    public var tag: String

    public init(ciphertext: String, iv: String, tag: String) {
        self.ciphertext = ciphertext
        self.iv = iv
        self.tag = tag
    }
}

/// `encrypt_payloads`: a translated Home Assistant notification with its content replaced by ciphertext, so FCM and
/// APNs see only a generic alert.
///
/// What is sealed is exactly what the app would otherwise have received:
/// - Android: the FCM `data` map (all strings), as a JSON object.
/// - iOS: the APNs payload (`aps` and the custom keys), as a JSON object.
///
/// The sealed message carries `{"encrypted", "iv", "tag", "encryption_type": "aes_256_gcm"}`: in FCM `data`, and
/// at the top level of the APNs payload beside an `aps` with the generic alert and `mutable-content: 1`
/// (plus the original `sound`, `badge` and `interruption-level`, which the OS acts on before the extension runs).
/// A device command is sealed too: on Android like any message; on iOS (a background push, which the app itself
/// receives, or an alert-less badge change) its `aps` stays as it was and only the custom keys are sealed.
public enum EncryptedNotification {
    /// Whether a translated notification can be sealed: every Android message, and on iOS alerts and device
    /// commands. Other silent pushes and Live Activity pushes cannot, as the OS acts on their payload itself.
    public static func canSeal(_ t: TranslatedNotification, platform: HAPlatform) -> Bool {
        switch platform {
        case .android: return true
        case .ios: return t.command != nil || (t.apns?.headers["apns-push-type"] ?? "alert") == "alert"
        }
    }

    /// The bytes to seal (see the type's documentation).
    public static func plaintext(_ t: TranslatedNotification, platform: HAPlatform) -> [UInt8] {
        switch platform {
        case .android: return JSONWriter.bytes(t.fcmMessage["data"] ?? .object([:]))
        case .ios: return JSONWriter.bytes(t.apns?.payload ?? t.fcmMessage["apns"]?["payload"] ?? .object([:]))
        }
    }

    public static func fields(_ s: SealedPayload) -> [String: JSONValue] {
        ["encrypted": .string(s.ciphertext), "iv": .string(s.iv), "tag": .string(s.tag), "encryption_type": "aes_256_gcm"]
    }

    /// The notification as sent once sealed. Provider metadata (priority, TTL, collapse id, push type) is kept.
    public static func apply(_ t: TranslatedNotification, platform: HAPlatform, sealed: SealedPayload, alertText: String) -> TranslatedNotification {
        var out = t
        let f = fields(sealed)
        guard case .object(var message) = t.fcmMessage else { return t }
        switch platform {
        case .android:
            message["data"] = .object(f)
            message.removeValue(forKey: "notification")
        case .ios:
            let original = t.apns?.payload["aps"] ?? t.fcmMessage["apns"]?["payload"]?["aps"]
            let isAlert = (t.apns?.headers["apns-push-type"] ?? "alert") == "alert"
            var aps: [String: JSONValue]
            if isAlert && t.command == nil {
                aps = ["alert": ["body": .string(alertText)], "mutable-content": 1]
                for key in ["sound", "badge", "interruption-level"] { if let v = original?[key] { aps[key] = v } }
                message["notification"] = ["body": .string(alertText)]
            } else {
                aps = original?.objectValue ?? ["content-available": 1]
            }
            var payload = f
            payload["aps"] = .object(aps)
            message["data"] = .object(f)
            if case .object(var block)? = message["apns"] {
                block["payload"] = .object(payload)
                message["apns"] = .object(block)
            }
            message.removeValue(forKey: "webpush")
            if var direct = t.apns {
                direct.payload = .object(payload)
                out.apns = direct
            }
        }
        out.fcmMessage = .object(message)
        return out
    }
}
