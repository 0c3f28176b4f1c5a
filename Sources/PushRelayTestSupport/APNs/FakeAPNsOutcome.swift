import Foundation
import NIOCore
import PushRelayCore

/// What the fake APNs answers for a device token once the request passed validation.
public indirect enum FakeAPNsOutcome: Sendable {
    /// 200 with `apns-id`.
    case success
    /// 410 `{"reason":"Unregistered","timestamp":<ms>}`.
    case unregistered(since: Date)
    /// 410 `ExpiredToken`.
    case expiredToken
    /// 400 `BadDeviceToken`.
    case badDeviceToken
    /// Any status and reason, with an optional `Retry-After` (429 `TooManyRequests`, 503 `ServiceUnavailable`…).
    case reject(status: Int, reason: String, retryAfter: Int? = nil)
    /// Answer `outcome` after `milliseconds`.
    case delayed(milliseconds: Int64, FakeAPNsOutcome)
    /// Close the TCP connection without answering.
    case dropConnection
    /// Reset the request's HTTP/2 stream without answering.
    case resetStream
    /// GOAWAY before processing the request (the client may send it again on a new connection), then close.
    case goAway
}

/// One request the fake APNs received, with what it answered.
public struct FakeAPNsRecord: Sendable {
    public var request: FakeRequest
    /// The device token from `:path`, when the path had the right shape.
    public var deviceToken: String?
    /// The answer's status and reason (nil reason for 200).
    public var status: Int
    public var reason: String?

    /// Shortcuts into the request.
    public var path: String { request.path }
    public var headers: [String: String] { request.headers }
    public var payload: JSONValue? { request.json }
    /// The bearer token, without `bearer `.
    public var providerToken: String? {
        guard let auth = request.header("authorization"), auth.lowercased().hasPrefix("bearer ") else { return nil }
        return String(auth.dropFirst(7))
    }
}
