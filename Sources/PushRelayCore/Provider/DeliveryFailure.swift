/// Why a provider did not deliver. Typed so callers switch on it instead of comparing strings.
public enum DeliveryFailure: Error, Sendable, Equatable {
    /// The token is dead or not for this app (FCM UNREGISTERED, APNs 410/BadDeviceToken…). `reason` is the provider's.
    case invalidToken(reason: String, message: String)
    /// The payload exceeds the provider's limit.
    case payloadTooLarge(message: String)
    /// The provider rejected the payload for another reason.
    case invalidPayload(reason: String, message: String)
    /// The request names a target the provider cannot address: a malformed device token, a push service that is not
    /// allowed, or one the caller chose that cannot be reached (its name does not resolve, it refuses the connection,
    /// its TLS fails). Nothing was sent, and the token is not remembered as dead. It says nothing about the provider's
    /// health, so the circuit breaker does not count it. `reason` names the problem (`MalformedToken`,
    /// `EndpointNotAllowed`, `EndpointUnreachable`).
    case invalidTarget(reason: String, message: String)
    /// Worth retrying: 429/500/503, timeouts, connection errors. `retryAfterSeconds` from `Retry-After` when given.
    /// Counts against the provider's health (the circuit breaker).
    case transient(reason: String, message: String, retryAfterSeconds: Int?)
    /// The provider throttles this one target (APNs `TooManyRequests`, FCM's per-device message rate): worth trying
    /// again later, not within the same request (it would only make the throttle longer), and it says nothing about
    /// the provider's health, so the circuit breaker does not count it. Answered like `transient`.
    case throttled(reason: String, message: String, retryAfterSeconds: Int?)
    /// The relay is misconfigured for this app (wrong credentials, sender id mismatch, no provider for it).
    case configuration(message: String)

    public var message: String {
        switch self {
        case .invalidToken(_, let m), .payloadTooLarge(let m), .invalidPayload(_, let m), .invalidTarget(_, let m), .transient(_, let m, _),
            .throttled(_, let m, _), .configuration(let m):
            return m
        }
    }
}

extension DeliveryFailure {
    /// The provider's `Retry-After`, in seconds, for a retryable failure that carried one.
    public var retryAfterSeconds: Int? {
        switch self {
        case .transient(_, _, let s), .throttled(_, _, let s): return s
        default: return nil
        }
    }

    /// Transport reasons for a request that was written but got no answer: the connection closed or died, the stream
    /// was reset, or no answer came in time. The provider may have processed it, so it is never sent again (a second
    /// send could show the notification twice); it is answered as failed, with this reason as its `errorCode`.
    public static let possiblyDeliveredReasons: Set<String> = ["ConnectionLost", "StreamReset", "Timeout"]

    /// Whether the provider may have processed the request (`possiblyDeliveredReasons`): not to be resent.
    public var mayHaveBeenDelivered: Bool {
        guard case .transient(let reason, _, _) = self else { return false }
        return Self.possiblyDeliveredReasons.contains(reason)
    }

    /// Provider reasons that say a token does not fit the provider it was sent to (APNs environment or topic), not that
    /// the device is gone: anyone may post a token with an app id whose `apps` entry names another provider, so these
    /// never put the token in the dead-token memory, which every dispatch reads.
    public static let providerMismatchReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic", "TopicDisallowed"]

    /// Whether the failure proves the token dead for every provider: an `invalidToken` other than a provider mismatch.
    public var provesTokenDead: Bool {
        guard case .invalidToken(let reason, _) = self else { return false }
        return !Self.providerMismatchReasons.contains(reason)
    }

    /// `invalidTarget` reasons (also the `errorType` of the HTTP answer).
    public static let malformedToken = "MalformedToken"
    public static let endpointNotAllowed = "EndpointNotAllowed"
    /// The destination the caller chose (a WebPush subscription's push service) could not be reached: its host does not
    /// resolve, or connecting to it failed (refused, unreachable, timed out, TLS). Not the provider's failure.
    public static let endpointUnreachable = "EndpointUnreachable"

    /// Whether the failure is the caller-chosen destination's, not the provider's (`endpointUnreachable`).
    public var isUnreachableDestination: Bool {
        guard case .invalidTarget(let reason, _) = self else { return false }
        return reason == Self.endpointUnreachable
    }
}
