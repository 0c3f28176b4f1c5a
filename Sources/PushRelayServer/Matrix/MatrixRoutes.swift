import Hummingbird
import NIOCore
import PushRelayCore

/// `POST /_matrix/push/v1/notify` (Matrix Push Gateway API v1).
///
/// Errors follow the Matrix convention, `{"errcode": "M_…", "error": "…"}`, and also carry PushRelay's non-empty
/// `message`. Other methods on the path get 405 `M_UNRECOGNIZED`.
struct MatrixRoutes<Context: RequestContext> {
    let gateway: MatrixGateway
    let maxBodyBytes: Int

    static var path: String { "/_matrix/push/v1/notify" }

    func register(_ routes: RouteTable<Context>) {
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

    static func error(_ status: HTTPResponse.Status, _ errcode: String, _ message: String, headers: HTTPFields = [:]) -> APIError {
        APIError(status, errcode, message, fields: ["errcode": .string(errcode), "error": .string(message)], headers: headers)
    }

    private func notify(_ request: Request) async throws -> Response {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBodyBytes)
        } catch let e as any HTTPResponseError where e.status == .contentTooLarge {
            throw Self.error(.contentTooLarge, "M_TOO_LARGE", "The request body is larger than \(maxBodyBytes) bytes (http.max_body_bytes).")
        }
        let body: JSONValue
        do {
            body = try JSONParser.parse(buffer.readableBytesView)
        } catch {
            throw Self.error(.badRequest, "M_NOT_JSON", "Expected a JSON request body (\(error)).")
        }
        let notification: MatrixNotification
        do {
            notification = try MatrixNotification(body: body)
        } catch {
            throw Self.error(.badRequest, error.code.rawValue, error.message)
        }
        switch await gateway.notify(notification) {
        case .accepted(let rejected):
            return JSONResponse.make(status: .ok, body: ["rejected": .array(rejected.map(JSONValue.string))])
        case .retryLater(let why):
            throw Self.error(.badGateway, "M_UNKNOWN", why)
        }
    }
}
