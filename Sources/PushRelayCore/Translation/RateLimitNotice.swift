/// The single "rate limited" notice PushRelay sends to a token when it reaches its daily maximum.
///
/// Same content as the official relay's notice (title, loc keys, `data`), but the wording is right: it is sent when
/// the limit is *reached* (not "more than"), and the quota resets at midnight UTC.
public enum RateLimitNotice {
    public static let analyticsLabel = "rateLimitNotification"
    public static let title = "Notifications Rate Limited"
    public static let titleLocKey = "rate_limit_notification.title"
    public static let bodyLocKey = "rate_limit_notification.body"

    public static func body(maximum: Int) -> String {
        "You have reached the limit of \(maximum) notifications today. New notifications will be delivered again after midnight UTC."
    }

    public static func translate(platform: HAPlatform, pushToken: String, maximum: Int, resetsAt: String) -> TranslatedNotification {
        let max = String(maximum)
        let data: [String: JSONValue] = [
            "rateLimited": "true",
            "maxNotificationsPerDay": .string(max),
            "resetsAt": .string(resetsAt),
        ]
        switch platform {
        case .android:
            // Data-only, like every Android message: the companion app renders `title`/`message` from `data`.
            // The localisation keys travel as data strings too (`body_loc_args` as a JSON array string), so an app
            // that localises the notice can; an `android.notification` block would bypass the app's rendering.
            var d = data
            d["title"] = .string(title)
            d["message"] = .string(body(maximum: maximum))
            d["title_loc_key"] = .string(titleLocKey)
            d["body_loc_key"] = .string(bodyLocKey)
            d["body_loc_args"] = .string(JSONValue.array([.string(max)]).jsonString())
            let message: JSONValue = .object([
                "token": .string(pushToken),
                "android": ["priority": "high"],
                "data": .object(d),
                "fcm_options": ["analytics_label": .string(analyticsLabel)],
            ])
            return TranslatedNotification(fcmMessage: message)
        case .ios:
            let aps: JSONValue = [
                "alert": [
                    "title": .string(title),
                    "body": .string(body(maximum: maximum)),
                    "title-loc-key": .string(titleLocKey),
                    "loc-key": .string(bodyLocKey),
                    "loc-args": [.string(max)],
                ]
            ]
            let headers: [String: String] = ["apns-push-type": "alert"]
            let message: JSONValue = .object([
                "token": .string(pushToken),
                "notification": ["title": .string(title), "body": .string(body(maximum: maximum))],
                "data": .object(data),
                "apns": [
                    "headers": .object(headers.mapValues(JSONValue.string)),
                    "payload": ["aps": aps],
                ],
                "fcm_options": ["analytics_label": .string(analyticsLabel)],
            ])
            // Direct APNs: the `data` entries become custom payload keys, as FCM delivers them.
            var payload = data
            payload["aps"] = aps
            var directHeaders = headers
            directHeaders["apns-priority"] = "10"
            return TranslatedNotification(
                fcmMessage: message,
                apns: APNsRequest(headers: directHeaders, payload: .object(payload))
            )
        }
    }
}
