import Foundation
import PushRelayCore

/// Maps an APNs answer to a receipt or a typed failure. Pure, so every branch is unit-tested.
enum APNsOutcome {
    /// The `reason` of an error body, if any.
    static func reason(of r: UpstreamResponse) -> APNsErrorReason? {
        r.json?["reason"]?.stringValue.map(APNsErrorReason.init(rawValue:))
    }

    static func interpret(
        _ r: UpstreamResponse,
        request: APNsPreparedRequest,
        environment: String,
        providerName: String,
        now: Date
    ) -> Result<DeliveryReceipt, DeliveryFailure> {
        if r.status == 200 {
            let id = r.header("apns-id") ?? request.headers["apns-id"] ?? ""
            return .success(DeliveryReceipt(messageID: id, sentPayload: request.sentPayload))
        }
        return .failure(failure(r, request: request, environment: environment, providerName: providerName, now: now))
    }

    static func failure(_ r: UpstreamResponse, request: APNsPreparedRequest, environment: String, providerName: String, now: Date) -> DeliveryFailure
    {
        let reason = reason(of: r)
        let reasonText = reason?.rawValue ?? "HTTP \(r.status)"
        let token = TokenDisplay.short(request.deviceToken)
        let topic = request.headers["apns-topic"] ?? "?"
        let reopen = "Open the Home Assistant companion app on that device so it registers a new token."

        if let reason, reason.meansInvalidToken, r.status == 400 || r.status == 410 {
            var detail: String
            switch reason {
            case .badDeviceToken:
                detail =
                    "APNs says \(token) is not a valid device token for the \(environment) environment. \(APNsRemedy.line(for: reason.rawValue, topic: topic) ?? "")"
            case .deviceTokenNotForTopic, .topicDisallowed:
                detail =
                    "APNs says device token \(token) does not belong to topic '\(topic)' (\(reason)). \(APNsRemedy.line(for: reason.rawValue, topic: topic) ?? "")"
            default:
                detail = "APNs says device token \(token) is no longer active (\(reason))"
                if let ms = r.json?["timestamp"]?.doubleValue {
                    detail += " since \(ISO8601UTC.string(Date(timeIntervalSince1970: ms / 1000)))"
                }
                detail += "."
            }
            return .invalidToken(reason: reason.rawValue, message: "\(detail) \(reopen)")
        }
        switch r.status {
        case 410:
            return .invalidToken(reason: reasonText, message: "APNs says device token \(token) is no longer active (\(reasonText)). \(reopen)")
        case 413:
            return .payloadTooLarge(message: "APNs rejected the payload as too large (\(reasonText)); the limit is 4096 bytes, 5120 for VoIP.")
        case 403:
            return .configuration(
                message: "\(providerName): APNs refused PushRelay's credentials (\(reasonText)). "
                    + (APNsRemedy.line(for: reasonText, topic: topic) ?? "Check the APNs key or certificate, team and topic.")
            )
        case 429 where reason == .tooManyProviderTokenUpdates:
            return .transient(
                reason: reasonText,
                message:
                    "\(providerName): APNs says the provider token changed too often on this connection (TooManyProviderTokenUpdates). \(APNsRemedy.line(for: reasonText, topic: topic) ?? "")",
                retryAfterSeconds: RetryAfter.seconds(r.header("retry-after"), now: now)
            )
        case 429 where reason == .tooManyRequests:
            return .throttled(
                reason: reasonText,
                message:
                    "\(providerName): APNs is throttling device token \(token): too many notifications to this one device (TooManyRequests). Send fewer.",
                retryAfterSeconds: RetryAfter.seconds(r.header("retry-after"), now: now)
            )
        case 429, 500...599:
            return .transient(
                reason: reasonText,
                message: "\(providerName): APNs is unavailable or throttling (HTTP \(r.status) \(reasonText))",
                retryAfterSeconds: RetryAfter.seconds(r.header("retry-after"), now: now)
            )
        case 400...499 where reason?.meansConfiguration == true || reason == nil:
            return .configuration(
                message: "\(providerName): APNs rejected the request (HTTP \(r.status) \(reasonText)). Check the provider's topic and endpoint."
            )
        case 400...499:
            return .invalidPayload(reason: reasonText, message: "APNs rejected the notification: \(reasonText) (HTTP \(r.status)).")
        default:
            return .transient(reason: reasonText, message: "\(providerName): unexpected answer from APNs (HTTP \(r.status))", retryAfterSeconds: nil)
        }
    }
}
