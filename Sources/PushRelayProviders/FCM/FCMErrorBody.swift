import PushRelayCore

/// The error object FCM answers with:
/// `{"error":{"code":404,"message":"…","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`.
public struct FCMErrorBody: Sendable, Equatable {
    /// `error.status`: the google.rpc code name (`INVALID_ARGUMENT`, `NOT_FOUND`, `RESOURCE_EXHAUSTED`…).
    public var status: String?
    /// `error.message`: human-readable, passed on to the caller.
    public var message: String?
    /// The FCM-specific `errorCode` from the `FcmError` detail (`UNREGISTERED`, `SENDER_ID_MISMATCH`…).
    public var errorCode: String?
    /// `google.rpc.BadRequest` field violations, as `field: description`.
    public var fieldViolations: [String]

    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// Parses what it can; unknown or malformed bodies give an empty value (never a crash).
    public init(json: JSONValue?) {
        let error = json?["error"]
        status = error?["status"]?.stringValue
        message = error?["message"]?.stringValue
        errorCode = nil
        fieldViolations = []
        for detail in error?["details"]?.arrayValue ?? [] {
            switch detail["@type"]?.stringValue {
            case FCMErrorBody.fcmErrorType?:
                if errorCode == nil { errorCode = detail["errorCode"]?.stringValue }
            case FCMErrorBody.badRequestType?:
                for v in detail["fieldViolations"]?.arrayValue ?? [] {
                    let field = v["field"]?.stringValue ?? "?"
                    let description = v["description"]?.stringValue ?? ""
                    fieldViolations.append(description.isEmpty ? field : "\(field): \(description)")
                }
            default:
                break
            }
        }
    }

    /// The most specific reason: the FCM `errorCode`, else the rpc `status`.
    public var reason: String? { errorCode ?? status }

    /// Whether a 429 throttles one device rather than the project: FCM answers a device's own message rate with
    /// `QUOTA_EXCEEDED` and a message naming the device ("Device message rate exceeded."); the project's quota
    /// names the quota metric instead.
    public var throttlesOneDevice: Bool {
        guard let m = message?.lowercased() else { return false }
        return m.contains("device") && !m.contains("quota metric")
    }
}
