import Hummingbird
import NIOCore
import PushRelayCore
import PushRelayStore

/// Registers a handler for the allowed methods of a path and a JSON 405 for the others.
struct RouteTable<Context: RequestContext> {
    let router: Router<Context>
    static var allMethods: [HTTPRequest.Method] { [.get, .post, .put, .delete, .patch, .head, .options] }

    func on(_ path: RouterPath, _ handlers: [HTTPRequest.Method: @Sendable (Request, Context) async throws -> Response]) {
        let allowed = handlers.keys.map(\.rawValue).sorted().joined(separator: ", ")
        for method in Self.allMethods {
            if let handler = handlers[method] {
                router.on(path, method: method, use: handler)
            } else {
                router.on(path, method: method) { request, _ -> Response in
                    throw APIError(.methodNotAllowed, "MethodNotAllowed", "\(request.method) is not allowed on \(request.uri.path); use \(allowed).",
                                   headers: [.allow: allowed])
                }
            }
        }
    }
}

extension Request {
    /// Reads the whole body (413 past `limit`) and parses it as JSON (400 otherwise).
    mutating func jsonBody(limit: Int) async throws -> JSONValue {
        try HomeAssistantRequest.parse(try await collectBody(upTo: limit).readableBytesView)
    }
}

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
        let reply = try await service.send(n, platform: platform)
        return JSONResponse.make(status: .init(code: reply.status), bytes: reply.body)
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
        let limits = try await service.rateLimits(pushToken: token)
        return JSONResponse.make(status: .ok, body: ["target": .string(token), "rateLimits": limits.json])
    }
}

/// How Home Assistant's endpoints read a request body (shared by the router and the NIO fast path).
enum HomeAssistantRequest {
    /// The notification in a parsed body: 403 without a push token, 400 for a malformed one.
    static func notification(_ body: JSONValue) throws(APIError) -> HANotification {
        do {
            return try HANotification(body: body)
        } catch {
            switch error {
            case .missingPushToken:
                try reject403()
            case .malformedBody, .wrongType:
                throw APIError(.badRequest, "InvalidRequest", error.description, fields: ["errorMessage": .string(error.description)])
            }
        }
    }

    /// A body as Home Assistant's endpoints take it: 400 unless it is JSON.
    static func parse(_ bytes: some Collection<UInt8>) throws(APIError) -> JSONValue {
        guard !bytes.isEmpty else { throw APIError.badRequest("The request body is empty; send a JSON object.") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw APIError.badRequest("The request body is not valid JSON (\(error)).")
        }
    }

    static func reject403() throws(APIError) -> Never {
        let message = HARequestError.missingPushToken.description
        throw APIError(.forbidden, "MissingToken", message, fields: ["errorMessage": .string("You did not send a token!")])
    }
}
