import Hummingbird
import NIOCore
import PushRelayCore
import PushRelayHTTP

/// `POST /_matrix/push/v1/notify` (Matrix Push Gateway API v1).
///
/// Errors follow the Matrix convention, `{"errcode": "M_…", "error": "…"}`, and also carry PushRelay's non-empty
/// `message`. Other methods on the path get 405 `M_UNRECOGNIZED`.
package struct MatrixRoutes<Context: RequestContext> {
    package let gateway: MatrixGateway
    /// `http.max_body_bytes`, with this route's 413 (`bodyTooLarge`) for its path.
    package let bodyLimit: BodyLimit

    package init(gateway: MatrixGateway, bodyLimit: BodyLimit) {
        self.gateway = gateway
        self.bodyLimit = bodyLimit
    }

    package static var path: String { "/_matrix/push/v1/notify" }

    package func register(_ routes: RouteTable<Context>) {
        let router = routes.router
        for method in RouteTable<Context>.allMethods {
            if method == .post {
                router.on(RouterPath(Self.path), method: .post) { request, _ in try await notify(request) }
            } else {
                router.on(RouterPath(Self.path), method: method) { request, _ -> Response in
                    throw Self.error(
                        .methodNotAllowed,
                        "M_UNRECOGNIZED",
                        "\(request.method) is not allowed on \(Self.path); use POST.",
                        headers: [.allow: "POST"]
                    )
                }
            }
        }
    }

    package static func error(_ status: HTTPResponse.Status, _ errcode: String, _ message: String, headers: HTTPFields = [:]) -> APIError {
        APIError(status, errcode, message, fields: ["errcode": .string(errcode), "error": .string(message)], headers: headers)
    }

    private func notify(_ request: Request) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(within: bodyLimit)
        let answer = await Self.answer(to: try Self.notification(buffer), gateway: gateway)
        return JSONResponse.make(status: answer.status, bytes: answer.body, headers: answer.headers)
    }

    /// The 413 of a notify body past `http.max_body_bytes`, on the router and on the fast path alike: the application
    /// gives it to `BodyLimit` for `path`.
    package static func bodyTooLarge(limit: Int) -> APIError {
        error(.contentTooLarge, "M_TOO_LARGE", APIError.bodyTooLargeMessage(limit: limit))
    }

    /// The notification in a notify body, or the 400 to answer (shared by the router and the fast path).
    package static func notification(_ buffer: ByteBuffer) throws(APIError) -> MatrixNotification {
        let body: JSONValue
        do {
            body = try JSONParser.parse(buffer.readableBytesView)
        } catch {
            throw Self.error(.badRequest, "M_NOT_JSON", "Expected a JSON request body (\(error)).")
        }
        do {
            return try MatrixNotification(body: body)
        } catch {
            throw Self.error(.badRequest, error.code.rawValue, error.message)
        }
    }

    /// The notify POST as the pipeline's fast path answers it (`NotifyFastPath`), by path: the body read by
    /// `notification`, the gateway's reply rendered by `answer`, as on the router. Bad input is answered on the event
    /// loop.
    package static func fastPath(_ gateway: MatrixGateway) -> [String: NotifyFastPath.Endpoint.Handler] {
        let handler: NotifyFastPath.Endpoint.Handler = { body in
            let n: MatrixNotification
            do throws(APIError) {
                n = try notification(body)
            } catch {
                return .now(NotifyFastPath.Endpoint.render(error))
            }
            return .later { await answer(to: n, gateway: gateway) }
        }
        return [path: handler]
    }

    /// The gateway's reply to `n` as status, headers and JSON body (shared by the router and the fast path).
    package static func answer(
        to n: MatrixNotification,
        gateway: MatrixGateway
    ) async -> (status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8]) {
        switch await gateway.notify(n) {
        case .accepted(let rejected):
            let body = rejected.isEmpty ? MatrixAnswerBodies.acceptedNone : JSONWriter.bytes(["rejected": .array(rejected.map(JSONValue.string))])
            return (.ok, [:], body)
        case .retryLater(let why):
            let error = Self.error(.badGateway, "M_UNKNOWN", why)
            return (error.status, error.headers, JSONWriter.bytes(error.body))
        case .tooManyDevices(let why):
            let error = Self.error(.badRequest, "M_BAD_JSON", why)
            return (error.status, error.headers, JSONWriter.bytes(error.body))
        }
    }
}

/// Answer bodies written once (a generic type cannot hold them).
private enum MatrixAnswerBodies {
    /// `{"rejected":[]}`, the usual answer.
    static let acceptedNone = JSONWriter.bytes(["rejected": .array([])])
}
