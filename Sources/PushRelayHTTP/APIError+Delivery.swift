import PushRelayCore

extension APIError {
    /// 503 when the database could not be read or written: nothing was sent, and a retry may succeed.
    package static let storageUnavailable = APIError(
        .serviceUnavailable,
        "StorageUnavailable",
        "PushRelay could not read or update its database, so the request was not carried out. Try again shortly; the server log has details.",
        headers: [.retryAfter: "5"]
    )

    /// 503 when the database did not commit the quota reservation within its share of `delivery.deadline_ms` (it is
    /// stalled or overloaded, not the push provider): nothing was sent or counted, and a retry may succeed.
    package static let storageBusy = APIError(
        .serviceUnavailable,
        "StorageBusy",
        "PushRelay's database did not record the quota reservation in time, so nothing was sent or counted. Try again shortly; the push provider is not at fault.",
        fields: ["errorCode": "StorageBusy"],
        headers: [.retryAfter: "2"]
    )

    /// Maps a provider's refusal to what the caller is told; the same for every entry point except the advice for a
    /// dead token (`invalidToken` builds that message from the provider's).
    package static func delivery(_ failure: DeliveryFailure, invalidToken: (String) -> String) -> APIError {
        switch failure {
        case .invalidToken(let reason, let message):
            return APIError(.gone, "InvalidToken", invalidToken(message), fields: ["errorCode": .string(reason)])
        case .payloadTooLarge(let message):
            return APIError(.contentTooLarge, "PayloadTooLarge", message)
        case .invalidPayload(let reason, let message):
            return APIError(.badRequest, "InvalidPayload", message, fields: ["errorCode": .string(reason)])
        case .invalidTarget(let reason, let message):
            return .invalidTarget(reason: reason, message: message)
        case .transient(let reason, let message, let retryAfter), .throttled(let reason, let message, let retryAfter):
            return APIError(
                .serviceUnavailable,
                "ProviderUnavailable",
                message,
                fields: ["errorCode": .string(reason)],
                headers: [.retryAfter: String(retryAfter ?? 30)]
            )
        case .configuration(let message):
            return .configuration(message)
        }
    }
}
