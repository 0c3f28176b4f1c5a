import Hummingbird
import NIOCore
import PushRelayCore
import PushRelayStore

/// Registers a handler for the allowed methods of a path and a JSON 405 for the others.
package struct RouteTable<Context: RequestContext> {
    package let router: Router<Context>

    package init(router: Router<Context>) {
        self.router = router
    }
    /// Every method a route answers: its own, and a JSON 405 naming them for the others (TRACE included, so that no
    /// standard method but CONNECT falls through to a 404; NIO answers CONNECT without a body whatever the router says).
    package static var allMethods: [HTTPRequest.Method] { [.get, .post, .put, .delete, .patch, .head, .options, .trace] }

    /// A path with a GET handler answers HEAD with it (RFC 9110 §9.3.2: a monitor may check `/health` with HEAD);
    /// `JSONErrorMiddleware` leaves out the body of every answer to HEAD.
    package func on(_ path: RouterPath, _ handlers: [HTTPRequest.Method: @Sendable (Request, Context) async throws -> Response]) {
        var handlers = handlers
        if let get = handlers[.get], handlers[.head] == nil { handlers[.head] = get }
        let allowed = handlers.keys.map(\.rawValue).sorted().joined(separator: ", ")
        for method in Self.allMethods {
            if let handler = handlers[method] {
                router.on(path, method: method, use: handler)
            } else {
                router.on(path, method: method) { request, _ -> Response in
                    throw APIError(
                        .methodNotAllowed,
                        "MethodNotAllowed",
                        "\(request.method) is not allowed on \(request.uri.path); use \(allowed).",
                        headers: [.allow: allowed]
                    )
                }
            }
        }
    }
}

extension Request {
    /// Reads the whole body (`BodyLimit`'s 413 past `limit`) and parses it as JSON (400 otherwise).
    package mutating func jsonBody(within limit: BodyLimit) async throws -> JSONValue {
        try JSONBody.parse(try await collectBody(within: limit).readableBytesView)
    }

    /// Reads the whole body (`PayloadTooLarge` past `limit` bytes) and parses it as JSON (400 otherwise).
    package mutating func jsonBody(limit: Int) async throws -> JSONValue {
        try await jsonBody(within: BodyLimit(maxBytes: limit))
    }
}

/// A request body read as JSON.
package enum JSONBody {
    /// The JSON value of `bytes`, or 400 when they are empty or not JSON.
    package static func parse(_ bytes: some Collection<UInt8>) throws(APIError) -> JSONValue {
        guard !bytes.isEmpty else { throw APIError.badRequest("The request body is empty; send a JSON object.") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw APIError.badRequest("The request body is not valid JSON (\(error)).")
        }
    }
}
