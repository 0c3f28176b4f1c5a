import PushRelayCore

/// FCM's error body: `{"error":{"code","message","status","details":[…]}}`.
enum FakeFCMErrors {
    static func body(
        code: Int,
        status: String,
        message: String,
        errorCode: String?,
        fieldViolations: [(field: String, description: String)] = []
    ) -> JSONValue {
        var details: [JSONValue] = []
        if let errorCode {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": .string(errorCode)])
        }
        if !fieldViolations.isEmpty {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": .array(fieldViolations.map { ["field": .string($0.field), "description": .string($0.description)] }),
            ])
        }
        var error: [String: JSONValue] = ["code": .int(Int64(code)), "message": .string(message), "status": .string(status)]
        if !details.isEmpty { error["details"] = .array(details) }
        return ["error": .object(error)]
    }

    static func response(
        code: Int,
        status: String,
        message: String,
        errorCode: String?,
        fieldViolations: [(field: String, description: String)] = [],
        retryAfter: Int? = nil
    ) -> FakeResponse {
        var headers: [(String, String)] = []
        if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
        return .json(
            code,
            body(code: code, status: status, message: message, errorCode: errorCode, fieldViolations: fieldViolations),
            headers: headers
        )
    }

    struct Rejection: Error {
        var response: FakeResponse
        var reason: String
        init(_ code: Int, _ status: String, _ message: String, errorCode: String? = nil, violations: [(field: String, description: String)] = []) {
            response = FakeFCMErrors.response(code: code, status: status, message: message, errorCode: errorCode, fieldViolations: violations)
            reason = errorCode ?? status
        }
    }
}
