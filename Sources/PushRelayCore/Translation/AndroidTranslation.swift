/// `POST /api/sendPush/android/v1`: a Home Assistant notification as a data-only FCM message, rendered by the
/// Android companion app.
///
/// Follows the official relay's Android mapping, without its defects: `ttl: 0` is kept, every `data` value is a
/// string (objects and arrays as compact JSON, booleans `"true"`/`"false"`, nulls dropped), and TTL/priority are
/// spelled as FCM HTTP v1 expects them.
public enum AndroidTranslation {
    public static let analyticsLabel = "androidV1Notification"

    /// Keys of the notify call's `data` copied verbatim (as strings) into the FCM `data` map.
    public static let passThroughKeys: [String] = [
        "icon", "color", "notification_icon_color", "sound", "tag", "clickAction",
        "bodyLocKey", "bodyLocArgs", "titleLocKey", "titleLocArgs",
        "channel", "ticker", "sticky", "eventTime", "localOnly", "notificationPriority",
        "defaultSound", "defaultVibrateTimings", "defaultLightSettings", "vibrateTimings", "visibility",
        "notificationCount", "lightSettings",
        "image", "timeout", "importance", "subject", "group", "icon_url", "ledColor", "vibrationPattern",
        "persistent", "chronometer", "when", "when_relative", "alert_once", "intent_class_name", "notification_icon",
        "ble_advertise", "ble_transmit", "video", "high_accuracy_update_interval", "package_name", "tts_text",
        "media_stream",
        "command", "intent_package_name", "intent_action", "intent_extras", "media_command", "media_package_name",
        "intent_uri", "intent_type",
        "ble_uuid", "ble_major", "ble_minor", "confirmation",
        "app_lock_enabled", "app_lock_timeout", "home_bypass_enabled", "car_ui", "ble_measured_power",
        "progress", "progress_max", "progress_indeterminate", "live_update", "critical_text",
    ]

    /// `passThroughKeys` for lookups: a notification carries a handful of `data` keys, so the translation walks those
    /// instead of probing all 75 of these.
    static let passThrough = Set(passThroughKeys)

    /// Action fields and the suffix of the flattened `action_{i}_…` key they go to.
    static let actionFields: [(field: String, suffix: String)] = [
        ("action", "key"), ("title", "title"), ("uri", "uri"), ("behavior", "behavior"),
        ("authenticationRequired", "authenticationRequired"),
    ]

    public static func translate(_ n: HANotification) -> TranslatedNotification {
        var data: [String: JSONValue] = [:]
        data.reserveCapacity(8 + n.data.count)
        var android: [String: JSONValue] = [:]

        if let m = n.message, !m.isEmpty { data["message"] = .string(m) }
        if let t = n.title, !t.isEmpty { data["title"] = .string(t) }
        if let w = n.registrationInfo.webhookID, !w.isEmpty { data["webhook_id"] = .string(w) }

        if let actions = n.data["actions"]?.arrayValue {
            for (index, action) in actions.enumerated() {
                guard let fields = action.objectValue else { continue }
                for (field, suffix) in actionFields {
                    if let v = fields[field], v.isTruthy {
                        data["action_\(index + 1)_\(suffix)"] = .string(v.fcmDataString)
                    }
                }
            }
        }

        // `ttl: 0` ("deliver now or never") is meaningful and kept, unlike in the official relay.
        if let ttl = n.data["ttl"], let d = FCMFormat.duration(ttl) { android["ttl"] = .string(d) }
        if let p = n.data["priority"], let priority = FCMFormat.androidPriority(p) { android["priority"] = .string(priority) }

        for (key, v) in n.data where v != .null && passThrough.contains(key) {
            data[key] = .string(v.fcmDataString)
        }

        let message: JSONValue = .object([
            "token": .string(n.pushToken),
            "android": .object(android),
            "data": .object(data),
            "fcm_options": ["analytics_label": .string(analyticsLabel)],
        ])
        return TranslatedNotification(
            fcmMessage: message,
            apns: nil,
            command: ExemptCommands.android(n.message),
            // `channel: alarm_stream` is visible and counted, as the official relay counts it.
            isCritical: false
        )
    }
}
