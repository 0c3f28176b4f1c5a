import PushRelayCore
import PushRelayStore

/// How one Home Assistant notification ended. The HTTP layer (`HomeAssistantAnswer`) turns it into the relay's wire
/// answer: 201, 429, 410 and the other errors with their JSON bodies.
package enum HomeAssistantOutcome: Sendable {
    /// Sent (by the cloud route or over a live push channel) or queued for the device. `sentPayload` is the
    /// encoded JSON of what was sent.
    case accepted(messageID: String, sentPayload: [UInt8], rateLimits: RateLimits)
    /// The token's daily quota is spent; nothing was sent.
    case rateLimited(maximum: Int, rateLimits: RateLimits)
    /// The token is remembered as dead; nothing was sent or counted.
    case deadToken(DeadToken, rateLimits: RateLimits)
    /// The provider did not take the notification. `rateLimits` when the dispatch counted it; nil when it was refused
    /// before the quota was touched (a provider at its in-flight bound or with its circuit open), which must stay
    /// cheap: no read of the quota either.
    case failed(DeliveryFailure, rateLimits: RateLimits?)
    /// A local-only notification was not queued: its device has `waiting` notifications stored for its push channel,
    /// the most `channel.max_queued_per_token` allows. Nothing was stored or counted.
    case deviceQueueFull(waiting: Int)
    /// A local-only notification was not queued: the notifications stored for all devices reach
    /// `channel.max_queued_bytes`. Nothing was stored or counted; room comes back as devices connect or messages expire.
    case queueFull(retryAfterSeconds: Int)
    /// The quota or device database could not be read or written; nothing was sent.
    case storageUnavailable
    /// The quota reservation did not commit in time (the storage is stalled); nothing was sent or counted.
    case storageBusy
    /// PushRelay's own configuration cannot serve this notification (no `apps` entry or provider for the app, …).
    case misconfigured(String)
    /// PushRelay failed in a way that is not the request's fault.
    case internalError(String)

    /// A short description for log lines (no tokens).
    package var summary: String {
        switch self {
        case .accepted: return "accepted"
        case .rateLimited(let maximum, _): return "rate limited (maximum \(maximum))"
        case .deadToken(let dead, _): return "dead token (\(dead.provider): \(dead.reason))"
        case .failed(let failure, _): return "failed: \(failure.message)"
        case .deviceQueueFull(let waiting): return "device queue full (\(waiting) waiting)"
        case .queueFull: return "local-only queue full"
        case .storageUnavailable: return "storage unavailable"
        case .storageBusy: return "storage busy"
        case .misconfigured(let message), .internalError(let message): return message
        }
    }

    var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }
}
