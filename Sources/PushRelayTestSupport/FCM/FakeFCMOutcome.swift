import PushRelayCore

/// What the fake FCM answers for a registration token once the message passed validation.
public indirect enum FakeFCMOutcome: Sendable {
    /// 200 `{"name":"projects/<p>/messages/<id>"}`.
    case success
    /// 404 NOT_FOUND, errorCode UNREGISTERED.
    case unregistered
    /// 400 INVALID_ARGUMENT "The registration token is not a valid FCM registration token".
    case invalidToken
    /// 403 PERMISSION_DENIED, errorCode SENDER_ID_MISMATCH.
    case senderIDMismatch
    /// 429 RESOURCE_EXHAUSTED, errorCode QUOTA_EXCEEDED: the project's quota ("Quota exceeded for quota metric…").
    case quotaExceeded(retryAfter: Int?)
    /// 429 RESOURCE_EXHAUSTED, errorCode QUOTA_EXCEEDED: one device's message rate ("Device message rate exceeded.").
    case deviceRateExceeded(retryAfter: Int?)
    /// 503 UNAVAILABLE.
    case unavailable(retryAfter: Int?)
    /// 500 INTERNAL.
    case internalError
    /// 401 UNAUTHENTICATED, errorCode THIRD_PARTY_AUTH_ERROR (bad APNs credentials inside Firebase).
    case thirdPartyAuthError
    /// 401 UNAUTHENTICATED without errorCode, as for a revoked access token.
    case unauthenticated
    /// Answer `outcome` after `milliseconds`.
    case delayed(milliseconds: Int64, FakeFCMOutcome)
    /// Close the TCP connection without answering.
    case dropConnection
    /// `status` with a body that is not JSON (a proxy's error page, a truncated answer).
    case malformedBody(status: Int)
}

/// One `messages:send` request the fake FCM received, with what it answered.
public struct FakeFCMRecord: Sendable {
    public var request: FakeRequest
    public var status: Int
    /// The FCM errorCode or rpc status of an error answer.
    public var reason: String?

    public var path: String { request.path }
    public var headers: [String: String] { request.headers }
    /// The request body (`{"message": …}`).
    public var body: JSONValue? { request.json }
    /// `message.token`.
    public var token: String? { request.json?["message"]?["token"]?.stringValue }
    /// `validate_only: true`: FCM checked the message, token included, and delivered nothing.
    public var validateOnly: Bool { request.json?["validate_only"]?.boolValue == true }
    /// The access token from `authorization: Bearer …`.
    public var accessToken: String? {
        guard let auth = request.header("authorization"), auth.lowercased().hasPrefix("bearer ") else { return nil }
        return String(auth.dropFirst(7))
    }
}

/// A scripted failure of the OAuth token endpoint.
public enum FakeOAuthFailure: Sendable {
    /// 400 `{"error":"invalid_grant"}`.
    case invalidGrant
    /// 503, transient.
    case unavailable
    /// Accepts the request and answers nothing for `milliseconds` (then 503): a token endpoint that hangs.
    case hang(milliseconds: Int64)
}
