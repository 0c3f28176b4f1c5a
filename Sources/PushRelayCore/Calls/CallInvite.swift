/// The call-invite push documented by SignalWire ("Push Notifications"): caller details in clear, the invite
/// zlib-compressed, AES-256-GCM-encrypted with the device's key and base64-encoded, with `iv` and `tag` beside it.
public struct CallInvite: Sendable, Equatable {
    public var notificationUUID: String
    public var callerName: String
    public var callerID: String
    public var title: String
    public var withVideo: Bool
    /// base64 of the AES-256-GCM ciphertext of the zlib-compressed invite (tag not included).
    public var inviteCiphertext: String
    /// base64 of the 12-byte nonce.
    public var iv: String
    /// base64 of the 16-byte GCM tag.
    public var tag: String

    /// The format version apps can switch on.
    public static let version = "1"

    public init(
        notificationUUID: String,
        callerName: String,
        callerID: String,
        title: String,
        withVideo: Bool,
        inviteCiphertext: String,
        iv: String,
        tag: String
    ) {
        self.notificationUUID = notificationUUID
        self.callerName = callerName
        self.callerID = callerID
        self.title = title
        self.withVideo = withVideo
        self.inviteCiphertext = inviteCiphertext
        self.iv = iv
        self.tag = tag
    }

    /// The platform-independent payload: every value a string, as in the document.
    public var payload: JSONValue {
        [
            "notification_uuid": .string(notificationUUID),
            "type": "call_invite",
            "version": .string(Self.version),
            "with_video": .string(withVideo ? "true" : "false"),
            "incoming_caller_name": .string(callerName),
            "incoming_caller_id": .string(callerID),
            "title": .string(title),
            "encryption_type": "aes_256_gcm",
            "invite": .string(inviteCiphertext),
            "iv": .string(iv),
            "tag": .string(tag),
        ]
    }
}
