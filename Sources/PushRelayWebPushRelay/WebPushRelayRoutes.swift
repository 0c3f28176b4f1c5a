import HTTPTypes
import Hummingbird
import NIOCore
import PushRelayCore
import PushRelayHTTP

/// `POST /relay-to/{production|development|fcm}/{token}[/{extra...}]` (toot-relay compatible) and
/// `GET /relay-to/_health`.
package struct WebPushRelayRoutes {
    package let service: WebPushRelayService

    package init(service: WebPushRelayService) {
        self.service = service
    }

    package func register(_ routes: RouteTable<PushRelayRequestContext>) {
        // The health check first: a path of its own, so that every other /relay-to/ path answers 405 with
        // `Allow: POST` to anything but a POST.
        routes.on("/relay-to/_health", [.get: { _, _ in JSONResponse.make(status: .ok, body: ["status": "ok"]) }])
        routes.on("/relay-to/**", [.post: { request, context in try await relay(request, context: context) }])
    }

    private func relay(_ request: Request, context: PushRelayRequestContext) async throws -> Response {
        guard service.admits(peer: context.peerAddress) else {
            throw APIError(
                .tooManyRequests,
                "RateLimited",
                "This address sent more than \(service.senderLimit ?? 0) relay requests in the last minute (relay.max_requests_per_minute_per_address); retry later.",
                headers: [.retryAfter: "60"]
            )
        }
        let target: RelayTarget
        switch RelayTarget.parse(path: request.uri.path) {
        case .success(let t): target = t
        case .failure(let e): throw APIError(.badRequest, e.errorType, e.message)
        }
        let parsed = WebPushHeaders.parse { name in
            guard let field = HTTPField.Name(name) else { return nil }
            let values = request.headers[values: field]
            return values.isEmpty ? nil : values.joined(separator: ",")
        }
        let headers: WebPushHeaders
        switch parsed {
        case .success(let h): headers = h
        case .failure(let e):
            throw APIError(.init(code: e.status), e.status == 415 ? "UnsupportedContentEncoding" : "InvalidRequest", e.description)
        }
        var request = request
        let limit = service.settings.maxBodyBytes
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError(
                .contentTooLarge,
                "PayloadTooLarge",
                "The WebPush body is larger than the relay accepts (\(limit) bytes, relay.max_body_bytes)."
            )
        }
        let (messageID, ttl) = try Self.accepted(await service.relay(target, headers: headers, body: Array(buffer.readableBytesView)))
        var fields: HTTPFields = [.location: "/relay-to/messages/\(messageID)"]
        fields[HTTPField.Name("TTL")!] = String(ttl)
        return JSONResponse.make(
            status: .created,
            body: ["messageId": .string(messageID), "ttl": .int(Int64(ttl))],
            headers: fields
        )
    }

    /// The accepted message's id and TTL, or the error the sender is answered.
    package static func accepted(_ outcome: WebPushRelayOutcome) throws(APIError) -> (messageID: String, ttl: Int) {
        switch outcome {
        case .accepted(let messageID, let ttl):
            return (messageID, ttl)
        case .emptyBody:
            throw .badRequest("The WebPush body is empty; send the encrypted message as the request body.")
        case .notConfigured(.apns):
            throw APIError(.notFound, "NotConfigured", "Relaying to APNs is not configured on this server (relay.apns_provider).")
        case .notConfigured(.fcm):
            throw APIError(.notFound, "NotConfigured", "Relaying to FCM is not configured on this server (relay.fcm_provider).")
        case .payloadTooLarge(let message):
            throw APIError(.contentTooLarge, "PayloadTooLarge", message)
        case .tokenLimitReached(let maximum):
            throw APIError(
                .tooManyRequests,
                "RateLimited",
                "This device token has reached its \(maximum) relayed messages for today (relay.daily_limit_per_token); they resume after midnight UTC.",
                headers: [.retryAfter: "3600"]
            )
        case .deadToken(let provider, let reason):
            throw APIError(.gone, "InvalidToken", "The device token is no longer valid (\(provider) reported \(reason)); drop this subscription.")
        case .storageUnavailable:
            throw .storageUnavailable
        case .storageBusy:
            throw .storageBusy
        case .failed(let failure):
            throw error(failure)
        }
    }

    /// What the WebPush sender is told when the provider refused.
    package static func error(_ failure: DeliveryFailure) -> APIError {
        .delivery(failure) { message in "The device token is no longer valid (\(message)); drop this subscription." }
    }
}
