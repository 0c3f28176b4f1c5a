/// The platform whose translation a Home Assistant endpoint applies.
public enum HAPlatform: String, Sendable, Codable {
    /// `POST /api/sendPush/android/v1`: data-only FCM message.
    case android
    /// `POST /api/sendPushNotification` and `POST /api/sendPush/iOS/v1`: FCM message with an `apns` block,
    /// or the same notification as a direct APNs request.
    case ios
}

/// `registration_info` as Home Assistant sends it with every notification.
public struct HARegistrationInfo: Sendable, Equatable {
    public var appID: String?
    public var appVersion: String?
    public var osVersion: String?
    public var webhookID: String?

    public init(appID: String? = nil, appVersion: String? = nil, osVersion: String? = nil, webhookID: String? = nil) {
        self.appID = appID
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.webhookID = webhookID
    }
}

/// One notification as Home Assistant's `mobile_app` notify platform POSTs it to a `push_url`.
public struct HANotification: Sendable, Equatable {
    /// The text, or a command such as `request_location_update`. Missing for WidgetKit subscription pushes.
    public var message: String?
    public var title: String?
    /// The notify call's `data`, unchanged (arbitrary nested JSON). Empty when absent.
    public var data: [String: JSONValue]
    /// The device's push token (FCM registration token or hex APNs token), as `PushTokenIdentity.canonical` spells it
    /// when read from a request.
    public var pushToken: String
    public var registrationInfo: HARegistrationInfo
    /// Present on local→cloud fallback sends.
    public var hassConfirmID: String?
    /// Present on 2026 Live Activity sends.
    public var liveActivityToken: String?

    public init(
        message: String? = nil,
        title: String? = nil,
        data: [String: JSONValue] = [:],
        pushToken: String,
        registrationInfo: HARegistrationInfo = .init(),
        hassConfirmID: String? = nil,
        liveActivityToken: String? = nil
    ) {
        self.message = message
        self.title = title
        self.data = data
        self.pushToken = pushToken
        self.registrationInfo = registrationInfo
        self.hassConfirmID = hassConfirmID
        self.liveActivityToken = liveActivityToken
    }
}

/// Why a request body could not be read as a Home Assistant notification.
public enum HARequestError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not JSON, or not a JSON object (→ 400).
    case malformedBody(String)
    /// A field has the wrong JSON type (→ 400).
    case wrongType(field: String, expected: String)
    /// `push_token` missing or empty (→ 403, as the official relay answers).
    case missingPushToken
    /// A field is longer than PushRelay stores (`FieldLimits`) (→ 400). Says which field and its bound.
    case tooLong(String)

    public var description: String {
        switch self {
        case .malformedBody(let why): return why
        case .wrongType(let field, let expected): return "Field '\(field)' must be \(expected)."
        case .tooLong(let why): return why
        case .missingPushToken:
            return
                "You did not send a push_token. Home Assistant sends the device's push token with every notification; check the device registration."
        }
    }
}

extension HANotification {
    /// Reads a Home Assistant request body. Extra top-level keys are tolerated; `message` may be missing. A push token,
    /// Live Activity token, webhook id, app id or title past its `FieldLimits` bound is refused (`tooLong`).
    public init(body: JSONValue) throws(HARequestError) {
        guard case .object(let obj) = body else {
            throw .malformedBody("The request body must be a JSON object.")
        }
        func optionalString(_ key: String, in o: [String: JSONValue], prefix: String = "") throws(HARequestError) -> String? {
            switch o[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw .wrongType(field: prefix + key, expected: "a string")
            }
        }
        let token: String
        switch obj["push_token"] {
        case nil, .null?: throw .missingPushToken
        case .string(let s)?:
            guard !s.isEmpty else { throw .missingPushToken }
            token = PushTokenIdentity.canonical(s)
        default: throw .wrongType(field: "push_token", expected: "a string")
        }
        var data: [String: JSONValue] = [:]
        switch obj["data"] {
        case nil, .null?: break
        case .object(let d)?: data = d
        default: throw .wrongType(field: "data", expected: "an object")
        }
        var info = HARegistrationInfo()
        switch obj["registration_info"] {
        case nil, .null?: break
        case .object(let r)?:
            info.appID = try optionalString("app_id", in: r, prefix: "registration_info.")
            info.appVersion = try optionalString("app_version", in: r, prefix: "registration_info.")
            info.osVersion = try optionalString("os_version", in: r, prefix: "registration_info.")
            info.webhookID = try optionalString("webhook_id", in: r, prefix: "registration_info.")
        default: throw .wrongType(field: "registration_info", expected: "an object")
        }
        let title = try optionalString("title", in: obj)
        let liveActivityToken = try optionalString("live_activity_token", in: obj)
        let bounds: [(String?, String, Int)] = [
            (token, "push_token", FieldLimits.token),
            (liveActivityToken, "live_activity_token", FieldLimits.token),
            (info.webhookID, "registration_info.webhook_id", FieldLimits.identifier),
            (info.appID, "registration_info.app_id", FieldLimits.identifier),
            (title, "title", FieldLimits.title),
        ]
        for (value, field, limit) in bounds {
            if let problem = FieldLimits.problem(value, field: field, limit: limit) { throw .tooLong(problem) }
        }
        self.init(
            message: try optionalString("message", in: obj),
            title: title,
            data: data,
            pushToken: token,
            registrationInfo: info,
            hassConfirmID: try optionalString("hass_confirm_id", in: obj),
            liveActivityToken: liveActivityToken.map(PushTokenIdentity.canonical)
        )
    }
}

extension HANotification {
    /// The notification as a Home Assistant request body again (what `init(body:)` reads), for storage and replays.
    public var requestBody: JSONValue {
        var o: [String: JSONValue] = ["push_token": .string(pushToken)]
        if let message { o["message"] = .string(message) }
        if let title { o["title"] = .string(title) }
        if !data.isEmpty { o["data"] = .object(data) }
        var r: [String: JSONValue] = [:]
        if let v = registrationInfo.appID { r["app_id"] = .string(v) }
        if let v = registrationInfo.appVersion { r["app_version"] = .string(v) }
        if let v = registrationInfo.osVersion { r["os_version"] = .string(v) }
        if let v = registrationInfo.webhookID { r["webhook_id"] = .string(v) }
        if !r.isEmpty { o["registration_info"] = .object(r) }
        if let hassConfirmID { o["hass_confirm_id"] = .string(hassConfirmID) }
        if let liveActivityToken { o["live_activity_token"] = .string(liveActivityToken) }
        return .object(o)
    }
}
