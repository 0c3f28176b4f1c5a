import Hummingbird
import PushRelayCore

/// Enforces `http.max_body_bytes` on every route of the router, also on those that never read a body (`/health`,
/// `/metrics`, the admin GETs, the websocket path): a request that declares a longer `Content-Length` is answered
/// 413 `PayloadTooLarge` (on the Matrix path in Matrix's form, `M_TOO_LARGE`) before any handler runs or any
/// credential is checked. A chunked body has no declared length: the routes that read one stop at the limit with the
/// same 413; the others never read it.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBodyBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let declared = request.headers[.contentLength], let length = Int(declared), length > maxBodyBytes else {
            return try await next(request, context)
        }
        if request.uri.path == MatrixRoutes<Context>.path {
            throw MatrixRoutes<Context>.error(.contentTooLarge, "M_TOO_LARGE", APIError.bodyTooLargeMessage(limit: maxBodyBytes))
        }
        throw APIError.bodyTooLarge(limit: maxBodyBytes)
    }
}
