import Foundation

/// A Home Assistant notification carrying `live_activity_token`: an ActivityKit push (start / update / end) for the
/// companion app's `HALiveActivityAttributes` activity. Always counted against the quota.
///
/// The FCM message routes through `apns.live_activity_token` (FCM then sets `apns-push-type: liveactivity`). The
/// direct APNs request carries `apns-push-type: liveactivity`; the APNs provider must send it to the Live Activity
/// token (not `push_token`) with the topic `<bundle id>.push-type.liveactivity`.
enum LiveActivityTranslation {
    static let analyticsLabel = "iOSLiveActivityV1"
    static let attributesType = "HALiveActivityAttributes"

    /// `data` keys copied into `content-state` under their own or a new name.
    static let contentStateKeys: [(from: String, to: String)] = [
        ("critical_text", "critical_text"), ("progress", "progress"), ("progress_max", "progress_max"),
        ("chronometer", "chronometer"), ("notification_icon", "icon"), ("notification_icon_color", "color"),
        ("background_color", "background_color"), ("text_color", "text_color"),
        ("progress_bar_color", "progress_bar_color"), ("progress_bar_direction", "progress_bar_direction"),
        ("url", "url"),
    ]
    /// `data.content_state` keys that override the derived content state.
    static let contentStateOverrides = [
        "title", "message", "critical_text", "progress", "progress_max", "chronometer", "countdown_end", "icon",
        "color", "background_color", "text_color", "progress_bar_color", "progress_bar_direction", "url",
    ]

    static func translate(_ n: HANotification, liveActivityToken: String, now date: Date) -> TranslatedNotification {
        let d = n.data
        let now = Int64(date.timeIntervalSince1970.rounded(.down))
        let event = d["event"]?.stringValue ?? "update"
        let silentUpdate = event == "update" && d["silent"] == .bool(true)
        let visibleMessage = n.message == "clear_notification" ? nil : n.message

        var aps: [String: JSONValue] = ["timestamp": .int(now), "event": .string(event)]
        aps["content-state"] = .object(contentState(n, now: now))

        if event == "start" {
            aps["attributes-type"] = .string(attributesType)
            var attributes: [String: JSONValue] = [
                "tag": nonNull(d["tag"]) ?? "",
                "title": .string(n.title ?? ""),
                "started_at": .int(now),
            ]
            if let w = n.registrationInfo.webhookID, !w.isEmpty { attributes["webhook_id"] = .string(w) }
            aps["attributes"] = .object(attributes)
        }
        if event == "end" {
            aps["dismissal-date"] = nonNull(d["dismissal_date"]) ?? .int(now)
        }
        if let stale = nonNull(d["stale_date"]) { aps["stale-date"] = stale }
        if let score = relevanceScore(d["relevance_score"]) { aps["relevance-score"] = .double(score) }

        let standardAlert: JSONValue = ["title": .string(n.title ?? ""), "body": .string(visibleMessage ?? "")]
        if let alert = d["alert"], alert.isTruthy {
            aps["alert"] = alert
            if let sound = d["alert_sound"], sound.isTruthy { aps["sound"] = sound }
        } else if silentUpdate {
            aps["alert"] = ["title": ""]  // keeps prompt delivery without a chime
        } else if ["start", "update", "end"].contains(event) {
            aps["alert"] = standardAlert
        }

        var headers: [String: String] = ["apns-priority": silentUpdate ? "5" : "10"]
        if event == "start", let tag = d["tag"], tag.isTruthy { headers["apns-collapse-id"] = tag.fcmDataString }

        let payload: JSONValue = ["aps": .object(aps)]
        let message: JSONValue = [
            "token": .string(n.pushToken),
            "apns": [
                "live_activity_token": .string(liveActivityToken),
                "headers": .object(headers.mapValues(JSONValue.string)),
                "payload": payload,
            ],
            "fcm_options": ["analytics_label": .string(analyticsLabel)],
        ]
        var directHeaders = headers
        directHeaders["apns-push-type"] = "liveactivity"
        return TranslatedNotification(
            fcmMessage: message,
            apns: APNsRequest(headers: directHeaders, payload: payload),
            command: nil,
            isCritical: false
        )
    }

    static func contentState(_ n: HANotification, now: Int64) -> [String: JSONValue] {
        let d = n.data
        var state: [String: JSONValue] = [:]
        // The app's content state requires `message`; commands are never shown as text.
        state["message"] = .string(n.message == "clear_notification" ? "" : (n.message ?? ""))
        if let t = n.title { state["title"] = .string(t) }
        for (from, to) in contentStateKeys {
            if let v = nonNull(d[from]) { state[to] = v }
        }
        if let when = nonNull(d["when"]) {
            if d["when_relative"]?.isTruthy == true, let seconds = when.doubleValue {
                // A relative time beyond any clock is left out rather than wrapped or trapped on.
                if let whole = IOSTranslation.wholeNumber(seconds, rounding: .down), case (let end, false) = now.addingReportingOverflow(whole) {
                    state["countdown_end"] = .int(end)
                }
            } else {
                state["countdown_end"] = when
            }
        }
        if let overrides = d["content_state"]?.objectValue {
            for key in contentStateOverrides {
                if let v = nonNull(overrides[key]) { state[key] = v }
            }
        }
        return state
    }

    static func nonNull(_ v: JSONValue?) -> JSONValue? {
        guard let v, v != .null else { return nil }
        return v
    }

    /// A relevance score clamped to 0…1, from a number or a numeric string; nil otherwise.
    static func relevanceScore(_ v: JSONValue?) -> Double? {
        let score: Double?
        switch v {
        case .int(let i)?: score = Double(i)
        case .double(let x)?: score = x
        case .string(let s)?:
            let t = s.trimmingCharacters(in: .whitespaces)
            score = t.isEmpty ? nil : Double(t)
        default: score = nil
        }
        guard let score, score.isFinite else { return nil }
        return min(max(score, 0), 1)
    }
}
