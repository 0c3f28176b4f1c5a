import Foundation

/// Format options of a Matrix app delivered straight to APNs (`matrix.apps.<id>` with an `apns` provider).
public struct MatrixAPNsOptions: Sendable, Equatable {
    /// `push_type`: sent as `apns-push-type` (`alert`, `background`, `voip`…). Unset: the APNs provider's default (`alert`).
    public var pushType: String?
    /// `convert_device_token_to_hex` (default true): pushkeys are base64 device tokens to be sent hex-encoded.
    public var convertDeviceTokenToHex: Bool
    /// `send_badge_counts` (default true): false leaves out `aps.badge`, `unread_count` and `missed_calls`.
    public var sendBadgeCounts: Bool

    public init(pushType: String? = nil, convertDeviceTokenToHex: Bool = true, sendBadgeCounts: Bool = true) {
        self.pushType = pushType
        self.convertDeviceTokenToHex = convertDeviceTokenToHex
        self.sendBadgeCounts = sendBadgeCounts
    }
}

/// Matrix notification → APNs request, following Sygnal's documented payloads: `loc-key`/`loc-args` by event type,
/// `badge` from the counts, the `event_id_only` format, `default_payload` merging, and truncation to 4096 bytes.
public enum MatrixAPNsTranslation {
    /// APNs' payload limit for everything but VoIP.
    public static let maxPayloadBytes = 4096
    /// Sender, room and body are cut to this many characters before truncation to the payload limit.
    public static let maxFieldCharacters = 1024

    public static func translate(_ n: MatrixNotification, device: MatrixDevice, options: MatrixAPNsOptions = .init()) -> MatrixTranslation {
        guard let token = deviceToken(device.pushkey, convertToHex: options.convertDeviceTokenToHex) else {
            return .reject(
                reason: options.convertDeviceTokenToHex
                    ? "the pushkey is not a base64 APNs device token (convert_device_token_to_hex is on)"
                    : "the pushkey is not a hex APNs device token"
            )
        }
        var defaultPayload: [String: JSONValue]? = nil
        if let d = device.data["default_payload"], d != .null {
            guard case .object(let o) = d else { return .reject(reason: "data.default_payload is not an object") }
            defaultPayload = o
        }

        let payload: JSONValue
        if n.eventID != nil && (n.type == nil || device.format == "event_id_only") {
            payload = eventIDOnlyPayload(n, defaultPayload: defaultPayload, options: options)
        } else {
            guard let full = fullPayload(n, defaultPayload: defaultPayload, options: options) else {
                return .skip(reason: "nothing to show: no alert and no badge")
            }
            payload = full
        }
        guard let fitted = PayloadTrimmer.fit(payload, limit: maxPayloadBytes, choppable: choppablePaths(payload)) else {
            return .tooLarge(reason: "the APNs payload exceeds \(maxPayloadBytes) bytes and has no text left to shorten")
        }
        var headers = ["apns-priority": n.prio == .low ? "5" : "10"]
        if let t = options.pushType { headers["apns-push-type"] = t }
        let apns = APNsRequest(headers: headers, payload: fitted)
        // The FCM form is unused for direct APNs delivery; it carries the token for the sandbox's record.
        return .send(TranslatedNotification(fcmMessage: ["token": .string(token)], apns: apns), token: token)
    }

    /// The hex device token for a pushkey: base64 → hex when `convertToHex`, else the pushkey itself (lower-cased),
    /// which must then be hex. Nil when the pushkey cannot be a device token.
    public static func deviceToken(_ pushkey: String, convertToHex: Bool) -> String? {
        if convertToHex {
            return deviceTokenBytes(pushkey)?.map { String(format: "%02x", $0) }.joined()
        }
        let hex = pushkey.lowercased()
        guard !hex.isEmpty, hex.count % 2 == 0, hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) else { return nil }
        return hex
    }

    /// The bytes of a base64 pushkey, in either alphabet, padded or not; nil when it is not base64 or empty.
    public static func deviceTokenBytes(_ pushkey: String) -> Data? {
        var b64 = pushkey.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let bytes = Data(base64Encoded: b64), !bytes.isEmpty else { return nil }
        return bytes
    }

    static func eventIDOnlyPayload(_ n: MatrixNotification, defaultPayload: [String: JSONValue]?, options: MatrixAPNsOptions) -> JSONValue {
        var p = defaultPayload ?? [:]
        if let r = n.roomID { p["room_id"] = .string(r) }
        if let e = n.eventID { p["event_id"] = .string(e) }
        if options.sendBadgeCounts {
            if let u = n.counts.unread { p["unread_count"] = .int(u) }
            if let m = n.counts.missedCalls { p["missed_calls"] = .int(m) }
        }
        // APNs requires an `aps` dictionary; an empty one keeps whatever the app set up in default_payload.
        if p["aps"]?.objectValue == nil { p["aps"] = [:] }
        return .object(p)
    }

    /// The alert as `loc-key` and `loc-args` (nil when the event type has nothing to say).
    public static func localizedAlert(_ n: MatrixNotification) -> (key: String, args: [String])? {
        let from = MatrixText.prefix(n.senderDisplayName ?? n.sender ?? " ", maxCharacters: maxFieldCharacters)
        let room = (n.roomName ?? n.roomAlias).map { MatrixText.prefix($0, maxCharacters: maxFieldCharacters) }
        guard let type = n.type, !type.isEmpty else { return nil }
        switch type {
        case "m.room.message", "m.room.encrypted":
            let body = (n.content?["body"]?.stringValue).flatMap { $0.isEmpty ? nil : MatrixText.prefix($0, maxCharacters: maxFieldCharacters) }
            let msgtype = n.content?["msgtype"]?.stringValue
            let action = msgtype == "m.emote" ? body : nil
            let text = msgtype == "m.emote" ? nil : body
            let isImage = text != nil && msgtype == "m.image"
            if let room {
                if isImage, let text { return ("IMAGE_FROM_USER_IN_ROOM", [from, text, room]) }
                if let text { return ("MSG_FROM_USER_IN_ROOM_WITH_CONTENT", [from, room, text]) }
                if let action { return ("ACTION_FROM_USER_IN_ROOM", [room, from, action]) }
                return ("MSG_FROM_USER_IN_ROOM", [from, room])
            }
            if isImage, let text { return ("IMAGE_FROM_USER", [from, text]) }
            if let text { return ("MSG_FROM_USER_WITH_CONTENT", [from, text]) }
            if let action { return ("ACTION_FROM_USER", [from, action]) }
            return ("MSG_FROM_USER", [from])
        case "m.call.invite":
            let sdp = n.content?["offer"]?["sdp"]?.stringValue ?? ""
            return (sdp.contains("m=video") ? "VIDEO_CALL_FROM_USER" : "VOICE_CALL_FROM_USER", [from])
        case "m.room.member":
            let membership = n.membership ?? n.content?["membership"]?.stringValue
            guard n.userIsTarget == true, membership == "invite" else { return nil }
            if let room { return ("USER_INVITE_TO_NAMED_ROOM", [from, room]) }
            return ("USER_INVITE_TO_CHAT", [from])
        default:
            return ("MSG_FROM_USER", [from])
        }
    }

    /// The badge: unread plus missed calls, each only if present; nil when neither is.
    public static func badge(_ counts: MatrixCounts) -> Int64? {
        guard !counts.isEmpty else { return nil }
        return (counts.unread ?? 0) + (counts.missedCalls ?? 0)
    }

    static func fullPayload(_ n: MatrixNotification, defaultPayload: [String: JSONValue]?, options: MatrixAPNsOptions) -> JSONValue? {
        let alert = localizedAlert(n)
        let badge = options.sendBadgeCounts ? badge(n.counts) : nil
        guard alert != nil || badge != nil else { return nil }
        // default_payload is only merged into event notifications; a badge-only update is just the badge.
        var p: [String: JSONValue] = n.type != nil ? (defaultPayload ?? [:]) : [:]
        var aps = p["aps"]?.objectValue ?? [:]
        if let alert {
            var a = aps["alert"]?.objectValue ?? [:]
            a["loc-key"] = .string(alert.key)
            a["loc-args"] = .array(alert.args.map(JSONValue.string))
            aps["alert"] = .object(a)
            if let r = n.roomID { p["room_id"] = .string(r) }
            if let e = n.eventID { p["event_id"] = .string(e) }
        }
        if let badge { aps["badge"] = .int(badge) }
        p["aps"] = .object(aps)
        return .object(p)
    }

    /// `aps.alert` (when a string), `aps.alert.body` and every `aps.alert.loc-args[i]`.
    static func choppablePaths(_ payload: JSONValue) -> [[PayloadTrimmer.Step]] {
        guard let alert = payload["aps"]?["alert"] else { return [] }
        if case .string = alert { return [[.key("aps"), .key("alert")]] }
        var paths: [[PayloadTrimmer.Step]] = [[.key("aps"), .key("alert"), .key("body")]]
        if case .array(let args)? = alert["loc-args"] {
            for i in args.indices { paths.append([.key("aps"), .key("alert"), .key("loc-args"), .index(i)]) }
        }
        return paths
    }
}
