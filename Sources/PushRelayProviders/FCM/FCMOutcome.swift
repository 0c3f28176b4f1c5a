import Foundation
import PushRelayCore

/// Maps an FCM `messages:send` answer to a receipt or a typed failure. Pure, so every branch is unit-tested.
enum FCMOutcome {
    static func interpret(
        _ r: UpstreamResponse,
        sentMessage: JSONValue,
        pushToken: String,
        projectID: String,
        providerName: String,
        now: Date
    ) -> Result<DeliveryReceipt, DeliveryFailure> {
        if (200..<300).contains(r.status) {
            let name = r.json?["name"]?.stringValue ?? "fcm:unnamed"
            return .success(DeliveryReceipt(messageID: name, sentPayload: sentMessage))
        }
        return .failure(failure(r, pushToken: pushToken, projectID: projectID, providerName: providerName, now: now))
    }

    static func failure(_ r: UpstreamResponse, pushToken: String, projectID: String, providerName: String, now: Date) -> DeliveryFailure {
        let body = FCMErrorBody(json: r.json)
        let said = body.message.map { ": \($0)" } ?? ""
        let token = TokenDisplay.short(pushToken)
        let reinstall = FCMRemedy.reinstall
        func remedy(_ code: String) -> String { FCMRemedy.line(for: code, projectID: projectID) ?? "" }

        switch r.status {
        case 404 where body.errorCode == "UNREGISTERED" || (body.errorCode == nil && body.status == "NOT_FOUND"):
            return .invalidToken(
                reason: "UNREGISTERED",
                message: "FCM no longer knows push token \(token) (the app was uninstalled or the token was rotated). \(reinstall)"
            )
        case 400 where FCMOutcome.saysTokenInvalid(body.message):
            return .invalidToken(
                reason: body.errorCode ?? "INVALID_ARGUMENT",
                message: "FCM says push token \(token) is not a valid registration token. \(reinstall)"
            )
        case 400 where FCMOutcome.saysTooBig(body.message):
            return .payloadTooLarge(message: "FCM rejected the message as too large (the limit is 4096 bytes)\(said)")
        case 400:
            let violations = body.fieldViolations.isEmpty ? "" : " [" + body.fieldViolations.joined(separator: "; ") + "]"
            return .invalidPayload(reason: body.reason ?? "INVALID_ARGUMENT", message: "FCM rejected the message\(said)\(violations)")
        case 401 where body.errorCode == "THIRD_PARTY_AUTH_ERROR":
            return .configuration(
                message:
                    "\(providerName): FCM could not deliver through APNs: Firebase project '\(projectID)' has no valid APNs key for this app (THIRD_PARTY_AUTH_ERROR). \(remedy("THIRD_PARTY_AUTH_ERROR"))"
            )
        case 401:
            return .configuration(
                message:
                    "\(providerName): FCM rejected the service account's access token even after a refresh\(said). Check that the service account belongs to project '\(projectID)' and has the 'Firebase Cloud Messaging API Admin' role."
            )
        case 403 where body.errorCode == "SENDER_ID_MISMATCH":
            return .configuration(
                message:
                    "\(providerName): push token \(token) belongs to a different Firebase project than '\(projectID)' (SENDER_ID_MISMATCH). \(remedy("SENDER_ID_MISMATCH"))"
            )
        case 403:
            return .configuration(
                message:
                    "\(providerName): FCM refused to send for project '\(projectID)' (\(body.reason ?? "HTTP 403"))\(said). \(remedy("PERMISSION_DENIED"))"
            )
        case 404:
            return .configuration(
                message:
                    "\(providerName): FCM answered 404 (\(body.reason ?? "no error details")) for project '\(projectID)'. Check the provider's endpoint and project_id."
            )
        case 429 where body.throttlesOneDevice:
            return .throttled(
                reason: body.reason ?? "QUOTA_EXCEEDED",
                message:
                    "\(providerName): FCM is throttling push token \(token): too many messages to this one device (HTTP 429)\(said). Send fewer.",
                retryAfterSeconds: RetryAfter.seconds(r.header("retry-after"), now: now)
            )
        case 429, 500...599:
            return .transient(
                reason: body.reason ?? "HTTP \(r.status)",
                message: "\(providerName): FCM is unavailable or throttling (HTTP \(r.status)\(body.reason.map { " \($0)" } ?? ""))\(said)",
                retryAfterSeconds: RetryAfter.seconds(r.header("retry-after"), now: now)
            )
        case 400...499:
            return .invalidPayload(reason: body.reason ?? "HTTP \(r.status)", message: "FCM rejected the message (HTTP \(r.status))\(said)")
        default:
            return .transient(
                reason: "HTTP \(r.status)",
                message: "\(providerName): unexpected answer from FCM (HTTP \(r.status))",
                retryAfterSeconds: nil
            )
        }
    }

    /// "The registration token is not a valid FCM registration token" and its variants.
    static func saysTokenInvalid(_ message: String?) -> Bool {
        guard let m = message?.lowercased(), m.contains("registration token") else { return false }
        return m.contains("not a valid") || m.contains("invalid")
    }

    /// "Message is too big" / "payload too large".
    static func saysTooBig(_ message: String?) -> Bool {
        guard let m = message?.lowercased() else { return false }
        return m.contains("too big") || m.contains("too large")
    }
}
