import HTTPTypes
import Hummingbird
import NIOCore
import PushRelayCore

/// `POST /relay-to/{production|development|fcm}/{token}[/{extra...}]` (toot-relay compatible) and
/// `GET /relay-to/_health`.
struct WebPushRelayRoutes {
    let service: WebPushRelayService

    func register(_ routes: RouteTable<PushRelayRequestContext>) {
        // The health check first: a path of its own, so that every other /relay-to/ path answers 405 with
        // `Allow: POST` to anything but a POST.
        routes.on("/relay-to/_health", [.get: { _, _ in JSONResponse.make(status: .ok, body: ["status": "ok"]) }])
        routes.on("/relay-to/**", [.post: { request, context in try await relay(request, context: context) }])
    }

    private func relay(_ request: Request, context: PushRelayRequestContext) async throws -> Response {
        try service.admit(peer: context.peerAddress)
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
            throw APIError(.contentTooLarge, "PayloadTooLarge", "The WebPush body is larger than the relay accepts (\(limit) bytes, relay.max_body_bytes).")
        }
        let accepted = try await service.relay(target, headers: headers, body: Array(buffer.readableBytesView))
        var fields: HTTPFields = [.location: "/relay-to/messages/\(accepted.messageID)"]
        fields[HTTPField.Name("TTL")!] = String(accepted.ttl)
        return JSONResponse.make(
            status: .created,
            body: ["messageId": .string(accepted.messageID), "ttl": .int(Int64(accepted.ttl))],
            headers: fields
        )
    }
}
