import Foundation

/// Options for the iOS/legacy translation.
public struct IOSTranslationOptions: Sendable {
    /// `registration_info.app_id` globs treated as the Home Assistant companion app: only these get commands,
    /// the `push` merge, categories, attachments and the other companion-app keys.
    public var companionAppIDs: [String]

    public init(companionAppIDs: [String] = ["*io.robbie.HomeAssistant*"]) {
        self.companionAppIDs = companionAppIDs
    }

    public func isCompanionApp(_ appID: String?) -> Bool {
        guard let appID else { return false }
        return companionAppIDs.contains { Glob($0).matches(appID) }
    }
}

/// `POST /api/sendPushNotification`: a Home Assistant notification as an FCM message with an `apns` block, and the
/// same notification as a direct APNs request.
///
/// Follows the official relay's legacy mapping. Differences: no crash when a passed-through `apns` block lacks
/// `aps`/`alert`; passed-through `data` made string-only; FCM v1 wire spelling (hyphenated `aps` keys, duration
/// TTL, string headers); background pushes get `apns-priority: 5`; an empty FCM `notification` block is omitted;
/// `delete_alert` sends no `notification` block (the relay leaves a `title` in it, which FCM may show: an alert from a
/// message that is exempt from the quota and meant to show nothing).
public enum IOSTranslation {
    public static let analyticsLabel = "legacyNotification"

    /// Kinds of attachment filled in from `video`, `image` and `audio`, in this order (the first one wins).
    static let attachmentShortcuts: [(key: String, contentType: String)] = [
        ("video", "mpeg4"), ("image", "jpeg"), ("audio", "waveformaudio"),
    ]
    /// Companion-app keys copied to the top level of the APNs payload when truthy.
    static let payloadKeys = [
        "url", "shortcut", "presentation_options", "notification_icon", "icon_url",
        "notification_icon_color", "color",
    ]
    /// Kiosk keys copied when present (0 is a meaningful level/volume).
    static let kioskKeys = ["level", "volume", "mode"]

    /// `now` is the time relative Live Activity times count from (the caller's time port): nothing here reads a clock.
    public static func translate(_ n: HANotification, options: IOSTranslationOptions = .init(), now: Date) -> TranslatedNotification {
        if let liveActivityToken = n.liveActivityToken {
            return LiveActivityTranslation.translate(n, liveActivityToken: liveActivityToken, now: now)
        }
        let d = n.data
        let isCompanion = options.isCompanionApp(n.registrationInfo.appID)

        // Base message.
        var notification: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        if let m = n.message {
            notification["body"] = .string(m)
            alert["body"] = .string(m)
        }
        if let t = n.title, !t.isEmpty {
            notification["title"] = .string(t)
            alert["title"] = .string(t)
        }
        var android: [String: JSONValue] = ["ttl": "0s", "priority": "high"]
        var aps: [String: JSONValue]? = ["alert": .object(alert), "sound": "default"]
        var payload: [String: JSONValue] = [:]  // apns.payload without `aps`
        var headers: [String: JSONValue] = [:]
        var apnsOther: [String: JSONValue] = [:]  // other keys of a passed-through `apns` block
        var fcmData: [String: JSONValue]? = nil
        var webpush: JSONValue? = nil

        // Generic pass-through (every app). Only objects are accepted; anything else is ignored.
        if let a = truthyObject(d["android"]) { android = FCMFormat.normalizeAndroidConfig(a) }
        if let a = truthyObject(d["apns"]) {
            headers = a["headers"]?.objectValue ?? [:]
            payload = a["payload"]?.objectValue ?? [:]
            aps = payload.removeValue(forKey: "aps")?.objectValue
            apnsOther = a
            apnsOther["headers"] = nil
            apnsOther["payload"] = nil
        }
        if let data = truthyObject(d["data"]) { fcmData = FCMFormat.stringMap(data) }
        if let w = truthyObject(d["webpush"]) { webpush = .object(w) }
        if let h = truthyObject(d["apns_headers"]) { headers = h }
        if let w = n.registrationInfo.webhookID, !w.isEmpty { payload["webhook_id"] = .string(w) }

        var command: String? = nil
        if isCompanion {
            command = ExemptCommands.iOS(n.message, isCompanionApp: true)
            let pushBadge = d["push"]?["badge"].flatMap { $0.isTruthy ? $0 : nil }
            func backgroundCommand(_ name: String) {
                notification = [:]
                aps = ["content-available": 1]
                if let b = pushBadge { aps?["badge"] = b }
                payload["homeassistant"] = ["command": .string(name)]
            }
            switch n.message {
            case "request_location_update", "request_location_updates":
                backgroundCommand("request_location_update")
            case "clear_badge":
                notification = [:]
                aps = ["badge": 0]
            case "clear_notification":
                backgroundCommand("clear_notification")
                var ha: [String: JSONValue] = ["command": "clear_notification"]
                if let tag = d["tag"], tag.isTruthy { ha["tag"] = tag }
                if let collapse = headers["apns-collapse-id"], collapse.isTruthy { ha["collapseId"] = collapse }
                headers["apns-collapse-id"] = nil
                payload["homeassistant"] = .object(ha)
            case "update_complications", "update_widgets":
                backgroundCommand(n.message!)
            default:
                translateCompanionNotification(n, notification: &notification, aps: &aps, payload: &payload, headers: &headers)
            }
        }

        // Final normalisation (every app).
        var finalAps = aps ?? [:]
        normalizeAps(&finalAps)
        // The official relay's critical exemption: a critical sound object with a volume above 0 (`interruption-level:
        // critical` alone is counted). Only for companion app ids: the critical-alert entitlement is the Home Assistant
        // app's, so for any other app the exemption would only let a caller send uncounted visible notifications.
        var isCritical = false
        if isCompanion, case .object(let sound)? = finalAps["sound"], sound["critical"] == .int(1),
            let volume = sound["volume"]?.doubleValue, volume > 0
        {
            isCritical = true
        }

        var stringHeaders: [String: String] = [:]
        for (k, v) in headers where v != .null { stringHeaders[k.lowercased()] = v.fcmDataString }
        // APNs' background type is for silent pushes: an alert or a sound makes it an alert push even with
        // content-available (a background push's alert would never be shown). A badge may ride along, as the relay sends it.
        let background = finalAps["content-available"] == .int(1) && finalAps["alert"] == nil && finalAps["sound"] == nil
        stringHeaders["apns-push-type"] = background ? "background" : "alert"
        if background { stringHeaders["apns-priority"] = "5" }

        var fullPayload = payload
        fullPayload["aps"] = .object(finalAps)

        var apnsBlock = apnsOther
        apnsBlock["headers"] = .object(stringHeaders.mapValues(JSONValue.string))
        apnsBlock["payload"] = .object(fullPayload)

        var message: [String: JSONValue] = [
            "token": .string(n.pushToken),
            "android": .object(android),
            "apns": .object(apnsBlock),
            "fcm_options": ["analytics_label": .string(analyticsLabel)],
        ]
        if !notification.isEmpty { message["notification"] = .object(notification) }
        if let fcmData { message["data"] = .object(fcmData) }
        if let webpush { message["webpush"] = webpush }

        // Direct APNs: FCM delivers `data` entries as custom top-level payload keys; the APNs payload's own keys win.
        var directPayload = fullPayload
        for (k, v) in fcmData ?? [:] where directPayload[k] == nil { directPayload[k] = v }
        var directHeaders = stringHeaders
        if directHeaders["apns-priority"] == nil { directHeaders["apns-priority"] = "10" }

        return TranslatedNotification(
            fcmMessage: .object(message),
            apns: APNsRequest(headers: directHeaders, payload: .object(directPayload)),
            command: command,
            isCritical: isCritical
        )
    }

    /// The companion-app branch for anything that is not a background command.
    private static func translateCompanionNotification(
        _ n: HANotification,
        notification: inout [String: JSONValue],
        aps apsIn: inout [String: JSONValue]?,
        payload: inout [String: JSONValue],
        headers: inout [String: JSONValue]
    ) {
        let d = n.data
        var aps = apsIn ?? [:]
        defer { apsIn = aps }
        var needsCategory = false

        if let subtitle = d["subtitle"], subtitle.isTruthy {
            // Written only into an alert that exists: a passed-through `apns` without one stays alert-less.
            updateAlert(&aps, create: false) { $0["subtitle"] = subtitle }
        }
        if let push = d["push"]?.objectValue {
            aps.merge(push) { _, new in new }
        }
        if let actions = d["actions"], actions.isTruthy {
            payload["actions"] = actions
            needsCategory = true
        }
        if let sound = d["sound"], sound.isTruthy {
            aps["sound"] = sound
        }
        if n.registrationInfo.osVersion?.hasPrefix("10.15") == true {
            // macOS Catalina wants sound names without their file extension.
            switch aps["sound"] {
            case .string(let s)?: aps["sound"] = .string(stripExtension(s))
            case .object(var o)?:
                if let name = o["name"]?.stringValue {
                    o["name"] = .string(stripExtension(name))
                    aps["sound"] = .object(o)
                }
            default: break
            }
        }
        if let entity = d["entity_id"], entity.isTruthy {
            payload["entity_id"] = entity
            needsCategory = true
        }
        for key in kioskKeys {
            if let v = d[key], v != .null { payload[key] = v }
        }
        if let actionData = d["action_data"], actionData.isTruthy {
            payload["homeassistant"] = actionData
            needsCategory = true
        }
        if let attachment = d["attachment"], attachment.isTruthy {
            payload["attachment"] = attachment
            needsCategory = true
        }
        for (key, contentType) in attachmentShortcuts {
            guard let url = d[key], url.isTruthy else { continue }
            needsCategory = true
            var att: [String: JSONValue]
            switch payload["attachment"] {
            case nil, .null?: att = [:]
            case .object(let o)?: att = o
            default: continue  // a non-object attachment given explicitly wins
            }
            if att["url"]?.isTruthy != true { att["url"] = url }
            if att["content-type"]?.isTruthy != true { att["content-type"] = .string(contentType) }
            payload["attachment"] = .object(att)
        }
        for key in payloadKeys {
            if let v = d[key], v.isTruthy { payload[key] = v }
        }
        if let tag = d["tag"]?.stringValue, !tag.isEmpty { headers["apns-collapse-id"] = .string(tag) }
        if let group = d["group"]?.stringValue, !group.isEmpty { aps["thread-id"] = .string(group) }

        if let category = aps["category"], category.isTruthy {
            if let s = category.stringValue { aps["category"] = .string(s.uppercased()) }
        } else if needsCategory {
            aps["category"] = "DYNAMIC"
        }

        let contentAvailable = aps["content-available"]?.isTruthy == true || aps["contentAvailable"]?.isTruthy == true
        if !contentAvailable { aps["mutable-content"] = 1 }

        if n.message == "delete_alert" {
            // The title goes too, unlike in the relay: FCM could show it, and this message is exempt from the quota.
            notification = [:]
            updateAlert(&aps, create: false) { alert in
                alert["title"] = nil
                alert["subtitle"] = nil
                alert["body"] = nil
            }
            aps["sound"] = nil
        }
        if n.message == "test_push_source" {
            updateAlert(&aps, create: true) { alert in
                alert["title"] = "test_push_source"
                alert["body"] = "apns-fcm"
            }
        }
    }

    // MARK: - Helpers

    static func truthyObject(_ v: JSONValue?) -> [String: JSONValue]? {
        guard let v, v.isTruthy else { return nil }
        return v.objectValue
    }

    /// Mutates `aps.alert` as an object (a string alert becomes `{body: …}`); creates it only when `create` is set.
    static func updateAlert(_ aps: inout [String: JSONValue], create: Bool, _ body: (inout [String: JSONValue]) -> Void) {
        var alert: [String: JSONValue]
        switch aps["alert"] {
        case .object(let o)?: alert = o
        case .string(let s)?: alert = ["body": .string(s)]
        default:
            guard create else { return }
            alert = [:]
        }
        body(&alert)
        aps["alert"] = .object(alert)
    }

    /// `chime.caf` → `chime`, `a.b.wav` → `a.b`; names without an extension (or starting with a dot) are unchanged.
    static func stripExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    static let apsRenames: [(String, String)] = [
        ("contentAvailable", "content-available"), ("mutableContent", "mutable-content"), ("threadId", "thread-id"),
        ("interruptionLevel", "interruption-level"), ("relevanceScore", "relevance-score"),
        ("targetContentId", "target-content-id"),
    ]
    static let alertRenames: [(String, String)] = [
        ("titleLocKey", "title-loc-key"), ("titleLocArgs", "title-loc-args"),
        ("subtitleLocKey", "subtitle-loc-key"), ("subtitleLocArgs", "subtitle-loc-args"),
        ("locKey", "loc-key"), ("locArgs", "loc-args"), ("actionLocKey", "action-loc-key"),
        ("launchImage", "launch-image"),
    ]

    static func rename(_ o: inout [String: JSONValue], _ pairs: [(String, String)]) {
        for (from, to) in pairs {
            guard let v = o.removeValue(forKey: from) else { continue }
            if o[to] == nil { o[to] = v }
        }
    }

    /// Wire form of `aps`: hyphenated keys, flags as `1`, sound and badge cleaned up as the official relay and
    /// firebase-admin do (minus their failure modes).
    static func normalizeAps(_ aps: inout [String: JSONValue]) {
        rename(&aps, apsRenames)
        for flag in ["content-available", "mutable-content"] {
            if let v = aps[flag] { aps[flag] = v.isTruthy ? 1 : nil }
        }
        if case .object(var alert)? = aps["alert"] {
            rename(&alert, alertRenames)
            aps["alert"] = .object(alert)
        }
        switch aps["sound"] {
        case .string(let s)?:
            if s.isEmpty || s.lowercased() == "none" { aps["sound"] = nil }
        case .object(var sound)?:
            if let v = sound["volume"] {
                sound["volume"] = parseFloat(v).map { .double(min(max($0, 0), 1)) }
            }
            if let c = sound["critical"] {
                // parseInt semantics; `true` is taken as 1 (firebase-admin's own reading of it).
                let value: Int64? = c == .bool(true) ? 1 : parseInt(c)
                sound["critical"] = (value ?? 0) != 0 ? 1 : nil
            }
            aps["sound"] = .object(sound)
        case nil:
            break
        default:
            aps["sound"] = nil  // null, numbers, arrays: not a sound
        }
        if let badge = aps["badge"] {
            aps["badge"] = badgeNumber(badge)
        }
    }

    static func badgeNumber(_ v: JSONValue) -> JSONValue? {
        switch v {
        case .int: return v
        case .double(let d): return wholeNumber(d).map(JSONValue.int)
        case .bool(let b): return b ? 1 : nil
        case .string(let s):
            let t = s.trimmingCharacters(in: .whitespaces)
            if let i = Int64(t) { return .int(i) }
            if let d = Double(t), let i = wholeNumber(d) { return .int(i) }
            return nil
        default: return nil
        }
    }

    /// `d` rounded by `rule` (without its fraction by default), or nil when it is not finite or beyond `Int64` (a
    /// caller's `1e300` is no number to send, and converting it would stop the process).
    static func wholeNumber(_ d: Double, rounding rule: FloatingPointRoundingRule = .towardZero) -> Int64? {
        guard d.isFinite else { return nil }
        return Int64(exactly: d.rounded(rule))
    }

    static func parseFloat(_ v: JSONValue) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d.isFinite ? d : nil
        case .string(let s):
            guard let d = Double(s.trimmingCharacters(in: .whitespaces)), d.isFinite else { return nil }
            return d
        default: return nil
        }
    }

    static func parseInt(_ v: JSONValue) -> Int64? {
        switch v {
        case .int(let i): return i
        case .double(let d): return wholeNumber(d)
        case .string(let s):
            // Leading optional sign and digits, like JavaScript's parseInt(s, 10).
            var t = Substring(s.trimmingCharacters(in: .whitespaces))
            var sign: Int64 = 1
            if t.first == "-" {
                sign = -1
                t = t.dropFirst()
            } else if t.first == "+" {
                t = t.dropFirst()
            }
            let digits = t.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let i = Int64(digits) else { return nil }
            return sign * i
        default: return nil
        }
    }
}
