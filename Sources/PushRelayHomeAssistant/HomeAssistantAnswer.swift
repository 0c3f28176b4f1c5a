import HTTPTypes
import PushRelayCore
import PushRelayHTTP
import PushRelayStore

/// The wire answer to one Home Assistant notification, as the official relay gives it (shared by the router and the
/// NIO fast path): 201 with `messageId`, `rateLimits`, `sentPayload` and `target`, or a JSON error with a non-empty
/// `message` (429 once the quota is spent, 410 for a dead token, …).
struct HomeAssistantAnswer {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: [UInt8]

    init(_ outcome: HomeAssistantOutcome, token: String) {
        if case .accepted(let messageID, let sentPayload, let limits) = outcome {
            status = .created
            headers = [:]
            body = Self.acceptedBody(messageID: messageID, sentPayload: sentPayload, rateLimits: limits, token: token)
        } else {
            let error = Self.error(outcome, token: token)
            status = error.status
            headers = error.headers
            body = JSONWriter.bytes(error.body)
        }
    }

    /// `{"messageId", "rateLimits", "sentPayload", "target"}` with the payload spliced in as encoded.
    private static func acceptedBody(messageID: String, sentPayload: [UInt8], rateLimits: RateLimits, token: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(sentPayload.count + 320)
        out.append(contentsOf: #"{"messageId":"#.utf8)
        JSONWriter.write(.string(messageID), into: &out)
        out.append(contentsOf: #","rateLimits":"#.utf8)
        rateLimits.writeJSON(into: &out)
        out.append(contentsOf: #","sentPayload":"#.utf8)
        out.append(contentsOf: sentPayload)
        out.append(contentsOf: #","target":"#.utf8)
        JSONWriter.write(.string(token), into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func error(_ outcome: HomeAssistantOutcome, token: String) -> APIError {
        switch outcome {
        case .accepted:
            preconditionFailure("an accepted notification is not an error")
        case .rateLimited(let maximum, let limits):
            return APIError(
                .tooManyRequests,
                "RateLimited",
                "The given target has reached the maximum number of notifications allowed per day (\(maximum)). Notifications resume after midnight UTC (\(limits.resetsAt)).",
                fields: ["target": .string(token), "rateLimits": limits.json]
            )
        case .deadToken(let dead, let limits):
            return APIError(
                .gone,
                "InvalidToken",
                "The push token is no longer valid: \(dead.provider) reported \(dead.reason) at \(dead.markedAt). Open the companion app on the device so it registers a new token with Home Assistant.",
                fields: ["target": .string(token), "rateLimits": limits.json, "errorCode": .string(dead.reason)]
            )
        case .failed(let failure, let limits):
            var error = APIError.delivery(failure) { message in
                "The push token is no longer valid (\(message)). Open the companion app on the device so it registers a new token with Home Assistant."
            }
            error.fields["target"] = .string(token)
            if let limits { error.fields["rateLimits"] = limits.json }
            return error
        case .deviceQueueFull(let waiting):
            return APIError(
                .tooManyRequests,
                "DeviceQueueFull",
                "The device has \(waiting) notifications waiting for its push channel, the most this server keeps for one device (channel.max_queued_per_token): this one was not queued. Room comes back as the device connects and receives them, or as they expire (channel.offline_ttl).",
                fields: ["target": .string(token)]
            )
        case .queueFull(let retryAfter):
            return APIError(
                .serviceUnavailable,
                "QueueFull",
                "This server keeps as many notifications for offline devices as it may (channel.max_queued_bytes): this one was not queued. Room comes back as devices connect and receive theirs, or as they expire (channel.offline_ttl).",
                fields: ["target": .string(token)],
                headers: [.retryAfter: String(retryAfter)]
            )
        case .storageUnavailable:
            return .storageUnavailable
        case .storageBusy:
            return .storageBusy
        case .misconfigured(let message):
            return .configuration(message, fields: ["target": .string(token)])
        case .internalError(let message):
            return APIError(.internalServerError, "InternalError", message)
        }
    }
}
