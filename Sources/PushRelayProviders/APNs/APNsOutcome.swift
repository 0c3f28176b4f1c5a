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
                    "APNs says \(token) is not a valid device token for the \(environment) environment (a development build's token sent to production, or the reverse, gives this too)."
            case .deviceTokenNotForTopic, .topicDisallowed:
                detail =
                    "APNs says device token \(token) does not belong to topic '\(topic)' (\(reason)). Check the provider's topic, or route this app to the right provider."
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
            return .configuration(message: "\(providerName): APNs refused PushRelay's credentials (\(reasonText)). " + credentialsHint(reason))
        case 429 where reason == .tooManyProviderTokenUpdates:
            return .transient(
                reason: reasonText,
                message: "\(providerName): APNs says the provider token changed too often on this connection (TooManyProviderTokenUpdates)",
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

    static func credentialsHint(_ reason: APNsErrorReason?) -> String {
        switch reason {
        case .expiredProviderToken?:
            return "The provider token is still considered expired after a renewal: check that this server's clock is correct."
        case .invalidProviderToken?, .unrelatedKeyIdInToken?:
            return "Check key_id, team_id and key_file: the key must belong to the team, be enabled for APNs, and match the topic's team."
        case .badCertificate?, .badCertificateEnvironment?:
            return "Check cert_file/cert_key_file and that the certificate's environment matches 'environment'."
        default:
            return "Check the APNs key or certificate, team and topic."
        }
    }
}
