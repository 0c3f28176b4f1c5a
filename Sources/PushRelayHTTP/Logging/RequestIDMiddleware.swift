import HTTPTypes
import Hummingbird

extension HTTPField.Name {
    package static let requestID = HTTPField.Name("X-Request-Id")!
}

/// Binds `RequestID.current` for the rest of the chain and echoes the id as `X-Request-Id`. The outermost
/// middleware, so the lines every other middleware and handler writes carry it. (The Home Assistant fast path does the
/// same for the requests it answers.)
package struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {

    package init() {

    }
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = RequestID.accept(request.headers[.requestID])
        var response = try await RequestID.$current.withValue(id) { try await next(request, context) }
        response.headers[.requestID] = id
        return response
    }
}
