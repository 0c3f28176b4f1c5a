import Hummingbird
import PushRelayHTTP

/// Enforces `http.max_body_bytes` (`BodyLimit`) on every route of the router, also on those that never read a body
/// (`/health`, `/metrics`, the admin GETs, the websocket path): a request that declares a longer `Content-Length` is
/// answered with the route's 413 (`BodyLimit.tooLarge`, which ends the connection) before any handler runs or any
/// credential is checked, once its body was read and dropped. A chunked body declares no length: the routes that read
/// one stop at the limit with the same 413 (`Request.collectBody(within:)`); the others never read it.
package struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    package let limit: BodyLimit

    package init(limit: BodyLimit) {
        self.limit = limit
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard limit.declaresTooMuch(request.headers) else { return try await next(request, context) }
        for try await _ in request.body {}
        throw limit.tooLarge(path: request.uri.path)
    }
}
