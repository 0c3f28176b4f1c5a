import HTTPTypes
import Hummingbird
import NIOCore

/// `http.max_body_bytes`: the one check of a request body's size and the one 413 for a body past it, on the router
/// (by the declared `Content-Length` before any route runs, `BodyLimitMiddleware`; as a route reads the body,
/// `Request.collectBody(within:)`) and on the fast path (as it collects the body, `NotifyFastPath.StateMachine`).
///
/// A body past the limit is read to its end and dropped, so that nothing of it is taken for a next request, and is
/// answered with `tooLarge(path:)`: the 413 of the route at that path when it has one of its own (the Matrix gateway's
/// `M_TOO_LARGE`, given by the application in `answers`), `PayloadTooLarge` otherwise. The answer says
/// `Connection: close`, and the connection ends after it (`ResponseHead`).
package struct BodyLimit: Sendable {
    /// A route's own 413 for a body past `limit` bytes.
    package typealias Answer = @Sendable (_ limit: Int) -> APIError

    /// The most bytes a body may have.
    package let maxBytes: Int
    /// The routes' own 413s, by path (without query).
    private let answers: [String: Answer]

    package init(maxBytes: Int, answers: [String: Answer] = [:]) {
        self.maxBytes = maxBytes
        self.answers = answers
    }

    /// Whether a body of `bytes` bytes is within the limit.
    package func allows(_ bytes: Int) -> Bool { bytes <= maxBytes }

    /// Whether a request with `fields` declares a body past the limit (`Content-Length`; a chunked body declares none).
    package func declaresTooMuch(_ fields: HTTPFields) -> Bool {
        guard let declared = fields[.contentLength], let length = Int(declared) else { return false }
        return !allows(length)
    }

    /// The answer to a body past the limit on `path` (without query): the route's own 413 or `PayloadTooLarge`, with
    /// `Connection: close`.
    package func tooLarge(path: String) -> APIError {
        var error = answers[path]?(maxBytes) ?? .bodyTooLarge(limit: maxBytes)
        error.headers[.connection] = "close"
        return error
    }
}

extension Request {
    /// The whole body, kept as the request's body; or, once it passes `limit`, the route's 413
    /// (`BodyLimit.tooLarge`), thrown after the rest of the body was read and dropped.
    package mutating func collectBody(within limit: BodyLimit) async throws -> ByteBuffer {
        var collected = ByteBuffer()
        var tooLarge = false
        for try await chunk in body where !tooLarge {
            if limit.allows(collected.readableBytes + chunk.readableBytes) {
                var chunk = chunk
                collected.writeBuffer(&chunk)
            } else {
                tooLarge = true
                collected = ByteBuffer()
            }
        }
        if tooLarge { throw limit.tooLarge(path: uri.path) }
        body = RequestBody(buffer: collected)
        return collected
    }
}
