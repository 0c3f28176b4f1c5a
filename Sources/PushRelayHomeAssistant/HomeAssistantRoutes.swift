import Hummingbird
import PushRelayCore
import PushRelayHTTP

/// The paths Home Assistant POSTs notifications to, and the platform each one is for: the one table both the router
/// (`HomeAssistantRoutes`) and the pipeline's fast path (`NotifyFastPath`) serve.
package enum HomeAssistantNotifyRoutes {
    package static let all: [(path: String, platform: HAPlatform)] = [
        ("/api/sendPush/android/v1", .android),
        ("/api/sendPushNotification", .ios),
        ("/api/sendPush/iOS/v1", .ios),
    ]

    /// The notify POSTs as the pipeline's fast path answers them (`NotifyFastPath`), by path: the body read by
    /// `HomeAssistantRequest`, the notification sent by `service`, the outcome rendered by `HomeAssistantAnswer`, as on
    /// the router (`HomeAssistantRoutes`). Bad input is answered on the event loop.
    ///
    /// `access` is checked before the body is read, by `fastPathGuards`; every request that reaches a handler passed
    /// it, so with a closed route each one is trusted.
    package static func fastPath(_ service: HomeAssistantService, access: HomeAssistantAccess? = nil) -> [String: NotifyFastPath.Endpoint.Handler] {
        let trusted = !(access?.isOpen ?? true)
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
                    let answer = HomeAssistantAnswer(await service.send(n, platform: platform, trusted: trusted), token: n.pushToken)
                    return (answer.status, answer.headers, answer.body)
                }
            }
        }
        return handlers
    }

    /// `access` for the fast path, by path: the answer to a refused request, before its handler runs. None when the
    /// routes are open.
    package static func fastPathGuards(_ access: HomeAssistantAccess) -> [String: NotifyFastPath.Endpoint.Guard] {
        guard !access.isOpen else { return [:] }
        var guards: [String: NotifyFastPath.Endpoint.Guard] = [:]
        for (path, _) in all {
            guards[path] = { head, client in
                do throws(APIError) {
                    _ = try access.check(target: head.path ?? "", client: client)
                    return nil
                } catch {
                    return NotifyFastPath.Endpoint.render(error)
                }
            }
        }
        return guards
    }
}

/// Home Assistant's `push_url` endpoints.
package struct HomeAssistantRoutes<Context: PeerAddressContext> {
    package let service: HomeAssistantService
    /// `http.max_body_bytes`.
    package let bodyLimit: BodyLimit
    /// `home_assistant.keys` and `home_assistant.allowed_networks`: checked before the body is read.
    package var access: HomeAssistantAccess? = nil

    package init(service: HomeAssistantService, bodyLimit: BodyLimit, access: HomeAssistantAccess? = nil) {
        self.service = service
        self.bodyLimit = bodyLimit
        self.access = access
    }

    package func register(_ routes: RouteTable<Context>) {
        for (path, platform) in HomeAssistantNotifyRoutes.all {
            routes.on(
                RouterPath(path),
                [
                    .post: { request, context in
                        let trusted = try admit(request, context: context)
                        return try await send(request, platform: platform, trusted: trusted)
                    }
                ]
            )
        }
        routes.on(
            "/api/checkRateLimits",
            [
                .post: { request, context in
                    _ = try admit(request, context: context)
                    return try await checkRateLimits(request)
                }
            ]
        )
    }

    /// `access`'s check: whether the request is trusted; throws a refused request's answer.
    private func admit(_ request: Request, context: Context) throws(APIError) -> Bool {
        guard let access else { return false }
        return try access.check(target: "?" + (request.uri.query ?? ""), client: context.peerAddress)
    }

    private func notification(_ request: Request) async throws -> HANotification {
        var request = request
        return try HomeAssistantRequest.notification(try await request.jsonBody(within: bodyLimit))
    }

    private func send(_ request: Request, platform: HAPlatform, trusted: Bool) async throws -> Response {
        let n = try await notification(request)
        let answer = HomeAssistantAnswer(await service.send(n, platform: platform, trusted: trusted), token: n.pushToken)
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
