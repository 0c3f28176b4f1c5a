import Foundation

/// Matrix notification → WebPush message for a browser subscription, following Sygnal's WebPush pushkin.
///
/// The pushkey is the subscription's `p256dh`; the pusher's `data` carries `endpoint` and `auth`, and optionally
/// `default_payload`, `events_only` and `only_last_per_room`.
public enum MatrixWebPushTranslation {
    /// The largest plaintext that still fits RFC 8030's 4096-byte message once encrypted as one `aes128gcm` record
    /// (86-byte header with a P-256 key id, 16-byte tag, 1-byte padding delimiter).
    public static let maxPlaintextBytes = 4096 - 86 - 16 - 1
    /// `content.body` is cut to this many characters (the last one becoming `…`).
    public static let maxBodyCharacters = 1000
    /// A `content.ciphertext` longer than this many characters is left out.
    public static let maxCiphertextCharacters = 2000

    public static func translate(_ n: MatrixNotification, device: MatrixDevice) -> MatrixTranslation {
        guard case .string(let endpoint)? = device.data["endpoint"], !endpoint.isEmpty else {
            return .reject(reason: "data.endpoint (the subscription's push service URL) is missing or not a string")
        }
        guard case .string(let auth)? = device.data["auth"], !auth.isEmpty else {
            return .reject(reason: "data.auth (the subscription's auth secret) is missing or not a string")
        }
        if device.data["events_only"] == .bool(true) && n.eventID == nil {
            return .skip(reason: "events_only: the notification is not about an event")
        }
        var payload: [String: JSONValue] = [:]
        if let d = device.data["default_payload"], d != .null {
            guard case .object(let o) = d else { return .reject(reason: "data.default_payload is not an object") }
            payload = o
        }
        let fields: [(String, String?)] = [
            ("room_id", n.roomID), ("room_name", n.roomName), ("room_alias", n.roomAlias), ("membership", n.membership),
            ("event_id", n.eventID), ("sender", n.sender), ("sender_display_name", n.senderDisplayName), ("type", n.type),
        ]
        for (key, value) in fields {
            if let value, !value.isEmpty { payload[key] = .string(value) }
        }
        if n.userIsTarget == true { payload["user_is_target"] = true }
        if let u = n.counts.unread { payload["unread"] = .int(u) }
        if let m = n.counts.missedCalls { payload["missed_calls"] = .int(m) }
        if var content = n.content {
            content["formatted_body"] = nil
            if case .string(let body)? = content["body"], body.count > maxBodyCharacters {
                content["body"] = .string(String(body.prefix(maxBodyCharacters - 1)) + MatrixText.ellipsis)
            }
            if case .string(let c)? = content["ciphertext"], c.count > maxCiphertextCharacters {
                content["ciphertext"] = nil
            }
            payload["content"] = .object(content)
        }
        let choppable: [[PayloadTrimmer.Step]] = [
            [.key("content"), .key("body")], [.key("sender_display_name")], [.key("room_name")], [.key("room_alias")],
        ]
        guard let fitted = PayloadTrimmer.fit(.object(payload), limit: maxPlaintextBytes, choppable: choppable) else {
            return .tooLarge(reason: "the WebPush message exceeds \(maxPlaintextBytes) bytes before encryption and has no text left to shorten")
        }
        var topic: String? = nil
        if device.data["only_last_per_room"] == .bool(true), let room = n.roomID {
            topic = Self.topic(roomID: room)
        }
        let message = WebPushMessage(
            endpoint: endpoint,
            p256dh: device.pushkey,
            auth: auth,
            body: JSONWriter.bytes(fitted),
            urgency: n.prio == .low ? "low" : "normal",
            topic: topic
        )
        return .send(TranslatedNotification(fcmMessage: fitted, webPush: message), token: device.pushkey)
    }

    /// The `Topic` for a room: unpadded base64url of its 22-byte BLAKE2s hash (30 characters; RFC 8030 allows 32).
    public static func topic(roomID: String) -> String {
        Base64URL.encode(BLAKE2s.hash(Array(roomID.utf8), digestLength: 22))
    }
}
