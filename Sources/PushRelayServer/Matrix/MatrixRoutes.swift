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
            throw Self.bodyTooLarge(limit: maxBodyBytes)
        }
        let answer = await Self.answer(to: try Self.notification(buffer), gateway: gateway)
        return JSONResponse.make(status: answer.status, bytes: answer.body, headers: answer.headers)
    }

    /// The 413 of a notify body past `http.max_body_bytes`, on the router and on the fast path alike.
    static func bodyTooLarge(limit: Int) -> APIError {
        error(.contentTooLarge, "M_TOO_LARGE", APIError.bodyTooLargeMessage(limit: limit))
    }

    /// The notification in a notify body, or the 400 to answer (shared by the router and the fast path).
    static func notification(_ buffer: ByteBuffer) throws(APIError) -> MatrixNotification {
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

    /// The gateway's reply to `n` as status, headers and JSON body (shared by the router and the fast path).
    static func answer(to n: MatrixNotification, gateway: MatrixGateway) async -> (status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8]) {
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
