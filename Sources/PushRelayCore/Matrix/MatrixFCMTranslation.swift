/// Format options of a Matrix app delivered through FCM HTTP v1 (`matrix.apps.<id>` with an `fcm` provider).
public struct MatrixFCMOptions: Sendable, Equatable {
    /// `fcm_options`: the base of every message (e.g. an `apns` block for iOS apps on FCM); `data`, `token` and
    /// `android.priority` are PushRelay's.
    public var fcmOptions: [String: JSONValue]
    /// `send_badge_counts` (default true): false leaves out `unread` and `missed_calls`.
    public var sendBadgeCounts: Bool

    public init(fcmOptions: [String: JSONValue] = [:], sendBadgeCounts: Bool = true) {
        self.fcmOptions = fcmOptions
        self.sendBadgeCounts = sendBadgeCounts
    }
}

/// Matrix notification → FCM HTTP v1 message with a string-only `data` payload, as Sygnal's v1 pushkin builds it,
/// minus its quirks: absent fields are left out (no JSON `null`), absent counts are left out (no `"None"`),
/// `default_payload` values are stringified, and a badge-only update with nothing to say is not sent.
public enum MatrixFCMTranslation {
    /// Each string field is cut to this many UTF-8 bytes, `…` included.
    public static let maxBytesPerField = 1024

    public static func translate(_ n: MatrixNotification, device: MatrixDevice, options: MatrixFCMOptions = .init()) -> MatrixTranslation {
        var data: [String: JSONValue] = [:]
        if let d = device.data["default_payload"], d != .null {
            guard case .object(let o) = d else { return .reject(reason: "data.default_payload is not an object") }
            for (k, v) in o where v != .null { data[k] = .string(v.fcmDataString) }
        }
        let fields: [(String, String?)] = [
            ("event_id", n.eventID), ("type", n.type), ("sender", n.sender), ("room_name", n.roomName),
            ("room_alias", n.roomAlias), ("membership", n.membership), ("sender_display_name", n.senderDisplayName),
            ("room_id", n.roomID),
        ]
        for (key, value) in fields {
            if let value { data[key] = .string(MatrixText.truncatedUTF8(value, maxBytes: maxBytesPerField)) }
        }
        if let userIsTarget = n.userIsTarget { data["user_is_target"] = .string(userIsTarget ? "true" : "false") }
        if let content = n.content {
            for (key, value) in content {
                guard case .string(let s) = value else { continue }
                data["content_" + key] = .string(MatrixText.truncatedUTF8(s, maxBytes: maxBytesPerField))
            }
        }
        var saysSomething = n.eventID != nil
        if options.sendBadgeCounts {
            if let u = n.counts.unread { data["unread"] = .string(String(u)) }
            if let m = n.counts.missedCalls { data["missed_calls"] = .string(String(m)) }
            saysSomething = saysSomething || !n.counts.isEmpty
        }
        guard saysSomething else { return .skip(reason: "a badge-only update with no counts to send") }
        data["prio"] = .string(n.prio == .low ? "normal" : "high")

        var message = options.fcmOptions
        for reserved in ["token", "topic", "condition", "data"] { message[reserved] = nil }
        var android = message["android"]?.objectValue ?? [:]
        android["priority"] = .string(n.prio == .low ? "normal" : "high")
        message["android"] = .object(android)
        message["data"] = .object(data)
        message["token"] = .string(device.pushkey)
        return .send(TranslatedNotification(fcmMessage: .object(message)), token: device.pushkey)
    }
}
