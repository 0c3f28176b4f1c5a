/// Home Assistant's websocket push-channel protocol (`GET /api/websocket`): what clients send, what the server answers.
/// Pure: parsing and building JSON text frames, no sockets.
public enum PushChannelWire {
    /// A frame a client sent.
    public enum ClientMessage: Sendable, Equatable {
        case auth(accessToken: String)
        case ping(id: Int64)
        /// `mobile_app/push_notification_channel`. `fallback: false` keeps unconfirmed messages queued for the device
        /// instead of sending them to the cloud.
        case subscribe(id: Int64, webhookID: String, supportConfirm: Bool, fallback: Bool)
        /// `mobile_app/push_notification_confirm`.
        case confirm(id: Int64, webhookID: String, confirmID: String)
        /// `unsubscribe_events`.
        case unsubscribe(id: Int64, subscription: Int64)
        /// A command with a valid id but a type PushRelay does not serve.
        case unknown(id: Int64, type: String)
    }

    /// Error codes of `result` frames, as Home Assistant spells them.
    public enum ErrorCode: String, Sendable {
        case invalidFormat = "invalid_format"
        case unknownCommand = "unknown_command"
        case notFound = "not_found"
        case unauthorized
        case idReuse = "id_reuse"
        case tooManyChannels = "too_many_channels"
    }

    /// A frame that could not be read: answered with `invalid_format` (with the id when there was one).
    public struct FormatError: Error, Sendable, Equatable {
        public var id: Int64?
        public var message: String
    }

    public static func parse(_ text: String) throws(FormatError) -> ClientMessage {
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw FormatError(id: nil, message: "Message is not valid JSON: \(error.reason)")
        }
        guard case .object(let o) = json else { throw FormatError(id: nil, message: "Message must be a JSON object") }
        guard case .string(let type)? = o["type"] else { throw FormatError(id: id(o), message: "Message has no 'type'") }
        if type == "auth" {
            guard case .string(let token)? = o["access_token"], !token.isEmpty else {
                throw FormatError(id: nil, message: "auth needs a non-empty 'access_token'")
            }
            return .auth(accessToken: token)
        }
        guard let id = id(o) else { throw FormatError(id: nil, message: "Commands need a positive integer 'id'") }
        func string(_ key: String) throws(FormatError) -> String {
            guard case .string(let s)? = o[key], !s.isEmpty else { throw FormatError(id: id, message: "'\(key)' must be a non-empty string") }
            return s
        }
        func bool(_ key: String, default d: Bool) throws(FormatError) -> Bool {
            switch o[key] {
            case nil, .null?: return d
            case .bool(let b)?: return b
            default: throw FormatError(id: id, message: "'\(key)' must be true or false")
            }
        }
        switch type {
        case "ping":
            return .ping(id: id)
        case "mobile_app/push_notification_channel":
            return .subscribe(
                id: id,
                webhookID: try string("webhook_id"),
                supportConfirm: try bool("support_confirm", default: false),
                fallback: try bool("fallback", default: true)
            )
        case "mobile_app/push_notification_confirm":
            return .confirm(id: id, webhookID: try string("webhook_id"), confirmID: try string("confirm_id"))
        case "unsubscribe_events":
            guard case .int(let sub)? = o["subscription"] else { throw FormatError(id: id, message: "'subscription' must be an integer") }
            return .unsubscribe(id: id, subscription: sub)
        default:
            return .unknown(id: id, type: type)
        }
    }

    private static func id(_ o: [String: JSONValue]) -> Int64? {
        if case .int(let i)? = o["id"], i > 0 { return i }
        return nil
    }

    // MARK: Server frames

    public static func authRequired(version: String) -> String {
        JSONWriter.string(["type": "auth_required", "ha_version": .string("pushrelay-\(version)")])
    }

    public static func authOK(version: String) -> String {
        JSONWriter.string(["type": "auth_ok", "ha_version": .string("pushrelay-\(version)")])
    }

    public static func authInvalid(_ message: String) -> String {
        JSONWriter.string(["type": "auth_invalid", "message": .string(message)])
    }

    public static func success(id: Int64) -> String {
        JSONWriter.string(["id": .int(id), "type": "result", "success": true, "result": .null])
    }

    public static func error(id: Int64?, _ code: ErrorCode, _ message: String) -> String {
        JSONWriter.string([
            "id": id.map(JSONValue.int) ?? .null, "type": "result", "success": false,
            "error": ["code": .string(code.rawValue), "message": .string(message.isEmpty ? code.rawValue : message)],
        ])
    }

    public static func pong(id: Int64) -> String {
        JSONWriter.string(["id": .int(id), "type": "pong"])
    }

    /// `{"id": subscription, "type": "event", "event": {...}}`.
    public static func event(subscription: Int64, _ event: JSONValue) -> String {
        JSONWriter.string(["id": .int(subscription), "type": "event", "event": event])
    }

    /// The event a notification becomes on the channel: `message`, `title`, `data` and, with confirmation, the
    /// confirm id as `hass_confirm_id`. `push_token` and `registration_info` are not sent (as in Home Assistant).
    public static func notificationEvent(_ n: HANotification, confirmID: String?) -> JSONValue {
        var e: [String: JSONValue] = [:]
        e["message"] = n.message.map(JSONValue.string) ?? .null
        if let t = n.title { e["title"] = .string(t) }
        if !n.data.isEmpty { e["data"] = .object(n.data) }
        if let confirmID { e["hass_confirm_id"] = .string(confirmID) }
        return .object(e)
    }
}
