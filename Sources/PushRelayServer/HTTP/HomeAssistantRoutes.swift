import Hummingbird
import PushRelayCore

/// Home Assistant's `push_url` endpoints.
struct HomeAssistantRoutes<Context: RequestContext> {
    let service: HomeAssistantService
    let maxBodyBytes: Int

    func register(_ routes: RouteTable<Context>) {
        routes.on("/api/sendPush/android/v1", [.post: { request, _ in try await send(request, platform: .android) }])
        routes.on("/api/sendPushNotification", [.post: { request, _ in try await send(request, platform: .ios) }])
        routes.on("/api/sendPush/iOS/v1", [.post: { request, _ in try await send(request, platform: .ios) }])
        routes.on("/api/checkRateLimits", [.post: { request, _ in try await checkRateLimits(request) }])
    }

    private func notification(_ request: Request) async throws -> HANotification {
        var request = request
        return try HomeAssistantRequest.notification(try await request.jsonBody(limit: maxBodyBytes))
    }

    private func send(_ request: Request, platform: HAPlatform) async throws -> Response {
        let n = try await notification(request)
        let answer = HomeAssistantAnswer(await service.send(n, platform: platform), token: n.pushToken)
        return JSONResponse.make(status: answer.status, bytes: answer.body, headers: answer.headers)
    }

    private func checkRateLimits(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.jsonBody(limit: maxBodyBytes)
        guard case .object(let o) = body else { throw APIError.badRequest("The request body must be a JSON object with a push_token.") }
        let token: String
        switch o["push_token"] {
        case .string(let s)? where !s.isEmpty: token = s
        case nil, .null?, .string?: try HomeAssistantRequest.reject403()
        default: throw APIError.badRequest("Field 'push_token' must be a string.")
        }
        guard let limits = await service.rateLimits(pushToken: token) else { throw APIError.storageUnavailable }
        return JSONResponse.make(status: .ok, body: ["target": .string(token), "rateLimits": limits.json])
    }
}
