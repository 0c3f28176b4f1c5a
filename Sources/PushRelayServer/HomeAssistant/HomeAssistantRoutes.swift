import Hummingbird
import PushRelayCore

/// The paths Home Assistant POSTs notifications to, and the platform each one is for: the one table both the router
/// (`HomeAssistantRoutes`) and the pipeline's fast path (`NotifyFastPath`) serve.
enum HomeAssistantNotifyRoutes {
    static let all: [(path: String, platform: HAPlatform)] = [
        ("/api/sendPush/android/v1", .android),
        ("/api/sendPushNotification", .ios),
        ("/api/sendPush/iOS/v1", .ios),
    ]

    /// The notify POSTs as the pipeline's fast path answers them (`NotifyFastPath`), by path: the body read by
    /// `HomeAssistantRequest`, the notification sent by `service`, the outcome rendered by `HomeAssistantAnswer`, as on
    /// the router (`HomeAssistantRoutes`). Bad input is answered on the event loop.
    static func fastPath(_ service: HomeAssistantService) -> [String: NotifyFastPath.Endpoint.Handler] {
        var handlers: [String: NotifyFastPath.Endpoint.Handler] = [:]
        for (path, platform) in all {
            handlers[path] = { body in
                let n: HANotification
                do throws(APIError) {
                    n = try HomeAssistantRequest.notification(try HomeAssistantRequest.parse(body.readableBytesView))
                } catch {
                    return .now(NotifyFastPath.Endpoint.render(error))
                }
                return .later {
                    let answer = HomeAssistantAnswer(await service.send(n, platform: platform), token: n.pushToken)
                    return (answer.status, answer.headers, answer.body)
                }
            }
        }
        return handlers
    }
}

/// Home Assistant's `push_url` endpoints.
struct HomeAssistantRoutes<Context: RequestContext> {
    let service: HomeAssistantService
    /// `http.max_body_bytes`.
    let bodyLimit: BodyLimit

    func register(_ routes: RouteTable<Context>) {
        for (path, platform) in HomeAssistantNotifyRoutes.all {
            routes.on(RouterPath(path), [.post: { request, _ in try await send(request, platform: platform) }])
        }
        routes.on("/api/checkRateLimits", [.post: { request, _ in try await checkRateLimits(request) }])
    }

    private func notification(_ request: Request) async throws -> HANotification {
        var request = request
        return try HomeAssistantRequest.notification(try await request.jsonBody(within: bodyLimit))
    }

    private func send(_ request: Request, platform: HAPlatform) async throws -> Response {
        let n = try await notification(request)
        let answer = HomeAssistantAnswer(await service.send(n, platform: platform), token: n.pushToken)
        return JSONResponse.make(status: answer.status, bytes: answer.body, headers: answer.headers)
    }

    private func checkRateLimits(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.jsonBody(within: bodyLimit)
        guard case .object(let o) = body else { throw APIError.badRequest("The request body must be a JSON object with a push_token.") }
        let token: String
        switch o["push_token"] {
        case .string(let s)? where !s.isEmpty: token = s
        case nil, .null?, .string?: try HomeAssistantRequest.reject403()
        default: throw APIError.badRequest("Field 'push_token' must be a string.")
        }
        guard let limits = await service.rateLimits(pushToken: PushTokenIdentity.canonical(token)) else { throw APIError.storageUnavailable }
        return JSONResponse.make(status: .ok, body: ["target": .string(token), "rateLimits": limits.json])
    }
}
