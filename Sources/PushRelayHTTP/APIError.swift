import Hummingbird
import NIOCore
import NIOHTTP1
import PushRelayCore
import PushRelayStore

/// Every error PushRelay answers: a JSON object with `errorType` and a non-empty `message`.
///
/// Handlers throw these; `JSONErrorMiddleware` renders them and turns any other error into one.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var errorType: String
    public var message: String
    /// Further fields (`target`, `rateLimits`, `errorCode`, `errorMessage`…).
    public var fields: [String: JSONValue]
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ errorType: String, _ message: String, fields: [String: JSONValue] = [:], headers: HTTPFields = [:]) {
        self.status = status
        self.errorType = errorType
        // Home Assistant crashes on an empty message: never send one.
        self.message = message.isEmpty ? "\(status.code) \(status.reasonPhrase)" : message
        self.fields = fields
        self.headers = headers
    }

    public var body: JSONValue {
        var o = fields
        o["errorType"] = .string(errorType)
        o["message"] = .string(message)
        return .object(o)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONResponse.make(status: status, body: body, headers: headers)
    }

    package static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "InvalidRequest", message) }

    /// 500 for a problem in PushRelay's own configuration; the message says so, so that a caller does not look for
    /// the fault in its request.
    package static func configuration(_ message: String, fields: [String: JSONValue] = [:]) -> APIError {
        APIError(
            .internalServerError,
            "ConfigurationError",
            "Server-side configuration problem (not a fault of the request): \(message)",
            fields: fields
        )
    }

    /// A target the provider cannot address: 400 with the problem as `errorType` (`MalformedToken`), or 403 for a
    /// push service this server does not send to (`EndpointNotAllowed`).
    package static func invalidTarget(reason: String, message: String, fields: [String: JSONValue] = [:]) -> APIError {
        APIError(reason == DeliveryFailure.endpointNotAllowed ? .forbidden : .badRequest, reason, message, fields: fields)
    }
    package static func notFound(_ message: String) -> APIError { APIError(.notFound, "NotFound", message) }

    /// 413 for a body past `http.max_body_bytes`: the one text, on the router and on the fast path alike.
    package static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "PayloadTooLarge", bodyTooLargeMessage(limit: limit))
    }

    package static func bodyTooLargeMessage(limit: Int) -> String {
        "The request body is larger than \(limit) bytes (http.max_body_bytes)."
    }

    /// Bytes NIO's HTTP/1.1 decoder refused: 431 for headers past its limits, 400 otherwise.
    static func notHTTP(_ error: HTTPParserError) -> APIError {
        if error == .headerOverflow {
            return APIError(.requestHeaderFieldsTooLarge, "HeadersTooLarge", "The request headers are larger than this server accepts.")
        }
        return .badRequest("The request is not valid HTTP/1.1 (\(error)); the connection is closed.")
    }
}

package enum JSONResponse {
    package static func make(status: HTTPResponse.Status, body: JSONValue, headers: HTTPFields = [:]) -> Response {
        make(status: status, bytes: JSONWriter.bytes(body), headers: headers)
    }

    package static func make(status: HTTPResponse.Status, bytes: [UInt8], headers: HTTPFields = [:]) -> Response {
        Response(status: status, headers: Self.headers(headers, contentLength: bytes.count), body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The headers of every JSON answer, on the router and on the NIO fast path alike: `extra`, then the content type
    /// and length.
    package static func headers(_ extra: HTTPFields, contentLength: Int) -> HTTPFields {
        var h = extra
        h[.contentType] = "application/json"
        h[.contentLength] = String(contentLength)
        return h
    }
}

/// Renders every error as JSON: `APIError`s as they are, Hummingbird's `HTTPError`s (404, 413…) with a message,
/// storage failures as 503 `StorageUnavailable`, and anything unexpected as a 500 whose message says what failed, without leaking internals to logs as secrets.
package struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// `http.max_body_bytes`, for the 413 text.
    package let maxBodyBytes: Int

    package init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    /// The answer, or the error as JSON. A HEAD request gets the same status and headers without the body (RFC 9110
    /// §9.3.2; an error's body too, which would otherwise be read as the start of the next answer).
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = await answer(request, context: context, next: next)
        return request.method == .head ? response.createHeadResponse() : response
    }

    private func answer(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return JSONResponse.make(status: error.status, body: error.body, headers: error.headers)
        } catch let error as any HTTPResponseError {
            let apiError: APIError
            switch error.status {
            case .notFound:
                apiError = APIError(
                    .notFound,
                    "NotFound",
                    "No endpoint at \(request.method) \(request.uri.path). See the README for the endpoints PushRelay serves."
                )
            case .contentTooLarge:
                apiError = .bodyTooLarge(limit: maxBodyBytes)
            default:
                let text = (error as? HTTPError)?.body ?? ""
                apiError = APIError(error.status, "HTTPError", text.isEmpty ? "\(error.status.code) \(error.status.reasonPhrase)" : text)
            }
            return JSONResponse.make(status: apiError.status, body: apiError.body, headers: apiError.headers)
        } catch let error as HTTPParserError {
            // The body broke off mid-request (a bad chunk): the client's fault, answered by HTTPParseErrorAnswerer,
            // which also closes the connection.
            context.logger.debug("request body is not valid HTTP/1.1 on \(request.method) \(LogRedaction.path(request.uri.path)): \(error)")
            let e = APIError.notHTTP(error)
            return JSONResponse.make(status: e.status, body: e.body)
        } catch let error as any StorageFailure {
            // A route that reached the database without a storage answer of its own (the admin API, for one).
            context.logger.error("storage failed on \(request.method) \(LogRedaction.path(request.uri.path)): \(error)")
            let e = APIError.storageUnavailable
            return JSONResponse.make(status: e.status, body: e.body, headers: e.headers)
        } catch {
            context.logger.error(
                "unhandled error on \(request.method) \(LogRedaction.path(request.uri.path)): \(String(reflecting: type(of: error)))"
            )
            let e = APIError(
                .internalServerError,
                "InternalError",
                "PushRelay could not process this request because of an internal error; see the server log."
            )
            return JSONResponse.make(status: e.status, body: e.body)
        }
    }
}

extension Error {
    /// Whether this error only means the server is stopping: cancelled work, or the database already closed.
    /// Background services log these at debug level instead of as failures.
    package var isShutdownNoise: Bool {
        if self is CancellationError { return true }
        if let failure = self as? any StorageFailure, failure.meansClosed { return true }
        return false
    }
}
