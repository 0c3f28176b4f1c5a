/// The body of `POST /_matrix/push/v1/notify` (Matrix Push Gateway API v1), validated.
///
/// Only `notification.devices` is required by the spec; everything else is optional and absent fields stay nil
/// (never JSON `null`, never the string "None").
public struct MatrixNotification: Sendable, Equatable {
    /// `event_id`: absent for badge-only updates.
    public var eventID: String?
    public var roomID: String?
    /// `type`: the event type, e.g. `m.room.message`. Absent in the `event_id_only` format.
    public var type: String?
    public var sender: String?
    public var senderDisplayName: String?
    public var roomName: String?
    public var roomAlias: String?
    /// Non-spec field Synapse sends for member events (`invite`, `join`…).
    public var membership: String?
    /// True when the user is the `state_key` of a member event.
    public var userIsTarget: Bool?
    public var prio: MatrixPriority
    /// The event content (may be absent).
    public var content: [String: JSONValue]?
    public var counts: MatrixCounts
    public var devices: [MatrixDevice]

    public init(
        eventID: String? = nil,
        roomID: String? = nil,
        type: String? = nil,
        sender: String? = nil,
        senderDisplayName: String? = nil,
        roomName: String? = nil,
        roomAlias: String? = nil,
        membership: String? = nil,
        userIsTarget: Bool? = nil,
        prio: MatrixPriority = .high,
        content: [String: JSONValue]? = nil,
        counts: MatrixCounts = .init(),
        devices: [MatrixDevice]
    ) {
        self.eventID = eventID
        self.roomID = roomID
        self.type = type
        self.sender = sender
        self.senderDisplayName = senderDisplayName
        self.roomName = roomName
        self.roomAlias = roomAlias
        self.membership = membership
        self.userIsTarget = userIsTarget
        self.prio = prio
        self.content = content
        self.counts = counts
        self.devices = devices
    }
}

/// `prio`: `high` (the default) or `low`.
public enum MatrixPriority: String, Sendable, Equatable {
    case high
    case low
}

/// `counts`: the user's unread notifications and missed calls. Absent counts stay nil.
public struct MatrixCounts: Sendable, Equatable {
    public var unread: Int64?
    public var missedCalls: Int64?

    public init(unread: Int64? = nil, missedCalls: Int64? = nil) {
        self.unread = unread
        self.missedCalls = missedCalls
    }

    public var isEmpty: Bool { unread == nil && missedCalls == nil }
}

/// One pusher the notification is for.
public struct MatrixDevice: Sendable, Equatable {
    public var appID: String
    public var pushkey: String
    /// `pushkey_ts`: unix seconds when the pushkey was last updated.
    public var pushkeyTS: Int64?
    /// The pusher's `data` minus `url`: `format`, `default_payload`, WebPush `endpoint`/`auth`…
    public var data: [String: JSONValue]
    /// Push-rule tweaks, e.g. `sound`.
    public var tweaks: [String: JSONValue]

    public init(appID: String, pushkey: String, pushkeyTS: Int64? = nil, data: [String: JSONValue] = [:], tweaks: [String: JSONValue] = [:]) {
        self.appID = appID
        self.pushkey = pushkey
        self.pushkeyTS = pushkeyTS
        self.data = data
        self.tweaks = tweaks
    }

    /// `data.format`, e.g. `event_id_only`.
    public var format: String? { data["format"]?.stringValue }
}

/// Why a notify request is malformed, with the Matrix error code to answer 400 with.
public struct MatrixRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// `M_BAD_JSON`: not JSON, or a field of the wrong type.
        case badJSON = "M_BAD_JSON"
        /// `M_MISSING_PARAM`: a required field is absent.
        case missingParam = "M_MISSING_PARAM"
        /// `M_NOT_JSON`: the body is not JSON at all.
        case notJSON = "M_NOT_JSON"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension MatrixNotification {
    /// Validates a parsed request body (`{"notification": {...}}`). An event id, app id or pushkey past its
    /// `FieldLimits` bound is refused (`M_BAD_JSON`, naming the field and the bound).
    public init(body: JSONValue) throws(MatrixRequestError) {
        guard case .object(let root) = body else {
            throw MatrixRequestError(.badJSON, "The request body must be a JSON object {\"notification\": {...}}.")
        }
        guard let raw = root["notification"], raw != .null else {
            throw MatrixRequestError(.missingParam, "Field 'notification' is required.")
        }
        guard case .object(let n) = raw else {
            throw MatrixRequestError(.badJSON, "Field 'notification' must be an object.")
        }
        let r = FieldReader(object: n, prefix: "notification")
        let eventID = try r.string("event_id")
        try Self.bound(eventID, field: "notification.event_id", limit: FieldLimits.identifier)
        let roomID = try r.string("room_id")
        let type = try r.string("type")
        let sender = try r.string("sender")
        let senderDisplayName = try r.string("sender_display_name")
        let roomName = try r.string("room_name")
        let roomAlias = try r.string("room_alias")
        let membership = try r.string("membership")
        let userIsTarget = try r.bool("user_is_target")
        let prioText = try r.string("prio")
        let content = try r.object("content")
        var counts = MatrixCounts()
        if let c = try r.object("counts") {
            let cr = FieldReader(object: c, prefix: "notification.counts")
            counts = MatrixCounts(unread: try cr.int("unread"), missedCalls: try cr.int("missed_calls"))
        }
        guard let rawDevices = n["devices"], rawDevices != .null else {
            throw MatrixRequestError(.missingParam, "Field 'notification.devices' is required.")
        }
        guard case .array(let list) = rawDevices else {
            throw MatrixRequestError(.badJSON, "Field 'notification.devices' must be a list.")
        }
        guard !list.isEmpty else {
            throw MatrixRequestError(.badJSON, "No devices in notification: 'notification.devices' is empty.")
        }
        var devices: [MatrixDevice] = []
        devices.reserveCapacity(list.count)
        for (k, item) in list.enumerated() {
            let prefix = "notification.devices[\(k)]"
            guard case .object(let d) = item else { throw MatrixRequestError(.badJSON, "'\(prefix)' must be an object.") }
            let dr = FieldReader(object: d, prefix: prefix)
            guard let appID = try dr.string("app_id") else { throw MatrixRequestError(.missingParam, "Field '\(prefix).app_id' is required.") }
            guard let pushkey = try dr.string("pushkey") else { throw MatrixRequestError(.missingParam, "Field '\(prefix).pushkey' is required.") }
            guard !appID.isEmpty else { throw MatrixRequestError(.badJSON, "Field '\(prefix).app_id' must not be empty.") }
            guard !pushkey.isEmpty else { throw MatrixRequestError(.badJSON, "Field '\(prefix).pushkey' must not be empty.") }
            try Self.bound(appID, field: "\(prefix).app_id", limit: FieldLimits.identifier)
            try Self.bound(pushkey, field: "\(prefix).pushkey", limit: FieldLimits.token)
            devices.append(
                MatrixDevice(
                    appID: appID,
                    pushkey: pushkey,
                    pushkeyTS: try dr.int("pushkey_ts"),
                    data: try dr.object("data") ?? [:],
                    tweaks: try dr.object("tweaks") ?? [:]
                )
            )
        }
        self.init(
            eventID: eventID,
            roomID: roomID,
            type: type,
            sender: sender,
            senderDisplayName: senderDisplayName,
            roomName: roomName,
            roomAlias: roomAlias,
            membership: membership,
            userIsTarget: userIsTarget,
            prio: prioText?.lowercased() == "low" ? .low : .high,
            content: content,
            counts: counts,
            devices: devices
        )
    }

    private static func bound(_ value: String?, field: String, limit: Int) throws(MatrixRequestError) {
        if let problem = FieldLimits.problem(value, field: field, limit: limit) { throw MatrixRequestError(.badJSON, problem) }
    }

    /// The same notification for one of its devices (what the retry queue stores).
    public func only(_ device: MatrixDevice) -> MatrixNotification {
        var copy = self
        copy.devices = [device]
        return copy
    }

    /// The largest string (in UTF-8 bytes) `retryCopy` keeps whole: no format sends more of one field (FCM cuts each
    /// to 1024 bytes, WebPush the body to 1000 characters and the whole message to under 4 KiB, APNs each field to
    /// 1024 characters and the payload to 4 KiB).
    public static let retryFieldBytes = 4096

    /// What the retry queue stores for `device`: the notification narrowed to it, keeping only what a format sends.
    /// Each string field and string in `content` is cut to its first `retryFieldBytes` bytes (whole characters),
    /// another `content` value longer than that as JSON is left out, and of the device only the `data` keys a format
    /// reads (`format`, `default_payload` up to `retryFieldBytes` as JSON, `endpoint`, `auth`, `events_only`,
    /// `only_last_per_room`) are kept, without its `tweaks`. Translated again it gives what the notification gave, within each format's limits.
    public func retryCopy(for device: MatrixDevice) -> MatrixNotification {
        func cut(_ s: String?) -> String? {
            guard let s, s.utf8.count > Self.retryFieldBytes else { return s }
            var used = 0
            var end = s.startIndex
            for c in s {
                used += c.utf8.count
                if used > Self.retryFieldBytes { break }
                end = s.index(after: end)
            }
            return String(s[..<end])
        }
        var copy = self
        copy.eventID = cut(eventID)
        copy.roomID = cut(roomID)
        copy.type = cut(type)
        copy.sender = cut(sender)
        copy.senderDisplayName = cut(senderDisplayName)
        copy.roomName = cut(roomName)
        copy.roomAlias = cut(roomAlias)
        copy.membership = cut(membership)
        copy.content = content.map { content in
            content.compactMapValues { value in
                if case .string(let s) = value { return .string(cut(s) ?? s) }
                return JSONWriter.bytes(value).count > Self.retryFieldBytes ? nil : value
            }
        }
        var kept = device
        kept.data = device.data.filter { ["format", "default_payload", "endpoint", "auth", "events_only", "only_last_per_room"].contains($0.key) }
        if let d = kept.data["default_payload"], JSONWriter.bytes(d).count > Self.retryFieldBytes { kept.data["default_payload"] = nil }
        kept.tweaks = [:]
        copy.devices = [kept]
        return copy
    }

    /// The notification as request JSON (`{"notification": {...}}`), absent fields left out.
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        func put(_ key: String, _ value: String?) { if let value { o[key] = .string(value) } }
        put("event_id", eventID)
        put("room_id", roomID)
        put("type", type)
        put("sender", sender)
        put("sender_display_name", senderDisplayName)
        put("room_name", roomName)
        put("room_alias", roomAlias)
        put("membership", membership)
        if let userIsTarget { o["user_is_target"] = .bool(userIsTarget) }
        o["prio"] = .string(prio.rawValue)
        if let content { o["content"] = .object(content) }
        var c: [String: JSONValue] = [:]
        if let u = counts.unread { c["unread"] = .int(u) }
        if let m = counts.missedCalls { c["missed_calls"] = .int(m) }
        if !c.isEmpty { o["counts"] = .object(c) }
        o["devices"] = .array(
            devices.map { d in
                var dj: [String: JSONValue] = ["app_id": .string(d.appID), "pushkey": .string(d.pushkey)]
                if let ts = d.pushkeyTS { dj["pushkey_ts"] = .int(ts) }
                if !d.data.isEmpty { dj["data"] = .object(d.data) }
                if !d.tweaks.isEmpty { dj["tweaks"] = .object(d.tweaks) }
                return .object(dj)
            }
        )
        return ["notification": .object(o)]
    }
}

/// Typed optional fields of one JSON object; `null` counts as absent.
private struct FieldReader {
    let object: [String: JSONValue]
    let prefix: String

    func present(_ key: String) -> JSONValue? {
        guard let v = object[key], v != .null else { return nil }
        return v
    }

    func string(_ key: String) throws(MatrixRequestError) -> String? {
        guard let v = present(key) else { return nil }
        guard case .string(let s) = v else { throw MatrixRequestError(.badJSON, "Field '\(prefix).\(key)' must be a string.") }
        return s
    }

    func bool(_ key: String) throws(MatrixRequestError) -> Bool? {
        guard let v = present(key) else { return nil }
        guard case .bool(let b) = v else { throw MatrixRequestError(.badJSON, "Field '\(prefix).\(key)' must be true or false.") }
        return b
    }

    func int(_ key: String) throws(MatrixRequestError) -> Int64? {
        guard let v = present(key) else { return nil }
        switch v {
        case .int(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 9e15: return Int64(d)
        default: throw MatrixRequestError(.badJSON, "Field '\(prefix).\(key)' must be an integer.")
        }
    }

    func object(_ key: String) throws(MatrixRequestError) -> [String: JSONValue]? {
        guard let v = present(key) else { return nil }
        guard case .object(let o) = v else { throw MatrixRequestError(.badJSON, "Field '\(prefix).\(key)' must be an object.") }
        return o
    }
}
