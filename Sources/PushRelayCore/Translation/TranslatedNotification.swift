/// A notification as a direct APNs request: the `apns-*` headers and the JSON payload with hyphenated `aps` keys.
///
/// `apns-topic` and `apns-id` are left to the APNs provider (they depend on its configuration and on retries).
public struct APNsRequest: Sendable, Equatable {
    /// Lower-case header names, e.g. `apns-push-type`, `apns-priority`, `apns-collapse-id`.
    public var headers: [String: String]
    /// The payload object, e.g. `{"aps":{"alert":{...},"mutable-content":1}, "url": ...}`.
    public var payload: JSONValue

    public init(headers: [String: String], payload: JSONValue) {
        self.headers = headers
        self.payload = payload
    }
}

/// The provider-ready form of one Home Assistant notification.
public struct TranslatedNotification: Sendable, Equatable {
    /// The FCM HTTP v1 `message` object (the value of `{"message": ...}`), `token` included.
    public var fcmMessage: JSONValue
    /// iOS only: the same notification as a direct APNs request.
    public var apns: APNsRequest?
    /// The device command this notification carries (`request_location_update`, `command_dnd`, …) when it is one
    /// of the commands PushRelay exempts from the quota; nil for ordinary notifications.
    public var command: String?
    /// A critical alert the quota exempts (`quota.exempt_critical`), by the official relay's rule: an iOS critical
    /// sound with a volume above 0, for a companion app id. Android `alarm_stream` and `interruption-level: critical`
    /// alone are not.
    public var isCritical: Bool
    /// WebPush only: the message for the `webpush` provider (subscription, plaintext body, headers).
    public var webPush: WebPushMessage?

    public init(fcmMessage: JSONValue, apns: APNsRequest? = nil, command: String? = nil, isCritical: Bool = false, webPush: WebPushMessage? = nil) {
        self.fcmMessage = fcmMessage
        self.apns = apns
        self.command = command
        self.isCritical = isCritical
        self.webPush = webPush
    }
}
