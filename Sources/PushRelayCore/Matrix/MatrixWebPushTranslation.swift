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

/// Base64url without padding (RFC 4648 §5), as WebPush and JWTs use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// The 6-bit value of each byte of either alphabet (`-` and `+` are 62, `_` and `/` 63); 0xFF for anything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    public static func encode<S: Sequence<UInt8>>(_ bytes: S) -> String {
        let input = Array(bytes)
        let count = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: count) { out in
            var o = 0
            var i = 0
            while i + 3 <= input.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                out[o + 3] = alphabet[Int(v & 63)]
                i += 3
                o += 4
            }
            let rest = input.count - i
            if rest > 0 {
                let v = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                o += 2
                if rest == 2 {
                    out[o] = alphabet[Int(v >> 6 & 63)]
                    o += 1
                }
            }
            return o
        }
    }

    /// Decodes base64url or standard base64, padded or not; nil for anything else.
    public static func decode(_ s: String) -> [UInt8]? {
        if let bytes = decodePlain(s) { return bytes }
        var t = s.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.hasSuffix("=") { t.removeLast() }
        switch t.count % 4 {
        case 1: return nil
        case 2: t += "=="
        case 3: t += "="
        default: break
        }
        return Data(base64Encoded: t).map(Array.init)
    }

    /// The common case without Foundation: only alphabet characters, then any `=`, and zero unused bits at the end.
    /// Nil for anything else, which `decode` then reads the general way.
    private static func decodePlain(_ s: String) -> [UInt8]? {
        var utf8 = Array(s.utf8)
        while utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
        let rest = utf8.count % 4
        guard rest != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count * 3 / 4)
        var i = 0
        while i + 4 <= utf8.count {
            let a = values[Int(utf8[i])]
            let b = values[Int(utf8[i + 1])]
            let c = values[Int(utf8[i + 2])]
            let d = values[Int(utf8[i + 3])]
            // 0xFF (not in either alphabet) is the only value with the top bits set.
            guard (a | b | c | d) & 0xC0 == 0 else { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            out.append(UInt8(v >> 16))
            out.append(UInt8(v >> 8 & 0xFF))
            out.append(UInt8(v & 0xFF))
            i += 4
        }
        if rest > 0 {
            let a = values[Int(utf8[i])]
            let b = values[Int(utf8[i + 1])]
            let c = rest == 3 ? values[Int(utf8[i + 2])] : 0
            guard (a | b | c) & 0xC0 == 0 else { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
            // Bits past the last byte must be zero (Foundation decides what else means).
            guard v & (rest == 2 ? 0xFFFF : 0xFF) == 0 else { return nil }
            out.append(UInt8(v >> 16))
            if rest == 3 { out.append(UInt8(v >> 8 & 0xFF)) }
        }
        return out
    }
}
