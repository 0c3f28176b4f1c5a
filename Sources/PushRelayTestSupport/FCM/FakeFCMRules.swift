import PushRelayCore

/// The message rules the fake FCM enforces (HTTP v1 `messages:send`). Pure.
enum FakeFCMRules {
    static let maxPayloadBytes = 4096
    static let maxTTLSeconds = 28 * 86_400

    /// Checks `{"message": …}`; returns `message.token`.
    static func check(_ body: [UInt8]) throws(FakeFCMErrors.Rejection) -> String {
        guard case .object(let root)? = try? JSONParser.parse(body) else {
            throw .init(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        }
        guard case .object(let message)? = root["message"] else {
            throw .init(
                400,
                "INVALID_ARGUMENT",
                "Request contains an invalid argument.",
                errorCode: "INVALID_ARGUMENT",
                violations: [("message", "Required field is missing")]
            )
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            throw .init(400, "INVALID_ARGUMENT", "Exactly one of token, topic or condition must be set.", errorCode: "INVALID_ARGUMENT")
        }
        if let data = message["data"] { try checkData(data, field: "message.data") }
        if case .object(let android)? = message["android"] {
            if let data = android["data"] { try checkData(data, field: "message.android.data") }
            if let ttl = android["ttl"] {
                guard let s = ttl.stringValue, let seconds = ttlSeconds(s), seconds <= Double(maxTTLSeconds) else {
                    throw .init(
                        400,
                        "INVALID_ARGUMENT",
                        "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \(ttl.jsonString())",
                        errorCode: "INVALID_ARGUMENT",
                        violations: [("message.android.ttl", "Invalid value (type.googleapis.com/google.protobuf.Duration)")]
                    )
                }
            }
            if let p = android["priority"] {
                guard let s = p.stringValue, ["normal", "high"].contains(s.lowercased()) else {
                    throw .init(
                        400,
                        "INVALID_ARGUMENT",
                        "Invalid value at 'message.android.priority' (type.google.firebase.fcm.v1.AndroidMessagePriority), \(p.jsonString())",
                        errorCode: "INVALID_ARGUMENT",
                        violations: [("message.android.priority", "Invalid value")]
                    )
                }
            }
        }
        if case .object(let apns)? = message["apns"] {
            if let headers = apns["headers"] {
                guard case .object(let h) = headers, h.values.allSatisfy({ $0.stringValue != nil }) else {
                    throw .init(
                        400,
                        "INVALID_ARGUMENT",
                        "Invalid value at 'message.apns.headers' (TYPE_STRING)",
                        errorCode: "INVALID_ARGUMENT",
                        violations: [("message.apns.headers", "Invalid value (TYPE_STRING)")]
                    )
                }
            }
            if let payload = apns["payload"], payload.objectValue == nil {
                throw .init(
                    400,
                    "INVALID_ARGUMENT",
                    "Invalid value at 'message.apns.payload' (type.googleapis.com/google.protobuf.Struct)",
                    errorCode: "INVALID_ARGUMENT"
                )
            }
        }
        var sized = message
        sized["token"] = nil
        if JSONWriter.bytes(.object(sized)).count > maxPayloadBytes {
            throw .init(400, "INVALID_ARGUMENT", "Message is too big", errorCode: "INVALID_ARGUMENT")
        }
        guard let token = message["token"]?.stringValue, !token.isEmpty else {
            throw .init(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT")
        }
        return token
    }

    /// `map<string,string>`: every value a string, no reserved key.
    static func checkData(_ data: JSONValue, field: String) throws(FakeFCMErrors.Rejection) {
        guard case .object(let o) = data else {
            throw .init(
                400,
                "INVALID_ARGUMENT",
                "Invalid value at '\(field)' (type.googleapis.com/google.protobuf.Struct)",
                errorCode: "INVALID_ARGUMENT"
            )
        }
        for (index, key) in o.keys.sorted().enumerated() {
            guard o[key]?.stringValue != nil else {
                let value = o[key]?.jsonString() ?? "null"
                throw .init(
                    400,
                    "INVALID_ARGUMENT",
                    "Invalid value at '\(field)[\(index)].value' (TYPE_STRING), \(value)",
                    errorCode: "INVALID_ARGUMENT",
                    violations: [("\(field)[\(index)].value", "Invalid value at '\(field)[\(index)].value' (TYPE_STRING), \(value)")]
                )
            }
            let lower = key.lowercased()
            if ["from", "message_type", "gcm"].contains(lower) || lower.hasPrefix("google.") || lower.hasPrefix("gcm.notification.") {
                throw .init(400, "INVALID_ARGUMENT", "Invalid data payload key: \(key)", errorCode: "INVALID_ARGUMENT")
            }
        }
    }

    /// Protobuf Duration JSON: `"3.5s"`, `"86400s"`.
    static func ttlSeconds(_ s: String) -> Double? {
        guard s.hasSuffix("s") else { return nil }
        let number = s.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber) else { return nil }
        if parts.count == 2 { guard (1...9).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil } }
        return Double(number)
    }
}
