import HTTPTypes
import NIOCore
import PushRelayCore

/// The fields every answer's head carries, wherever it is written: on the router (`ServerApplication`'s responder),
/// on the fast path (`NotifyFastPath`), and below both (`SlowClientGuard`'s 408, `HTTPParseErrorAnswerer`'s JSON
/// errors, `PushRelayHTTPChannel`'s refused and late websocket upgrades): `Date` (one cache per server, on the server's
/// time port), `Server`, and `Connection: close` when the connection ends after the answer. One per server.
///
/// The connection ends after an answer when its request asks for it (HTTP/1.0 without keep-alive, `Connection: close`,
/// CONNECT, or read once a stop began: `ConnectionCloseRule` writes all of these into the request as
/// `Connection: close`), when the answer itself says so (a body past the limit: `BodyLimit.tooLarge`; every answer
/// written below the router: `closing`), or when a stop has begun by the time the answer is written
/// (`ServerLifecycle`), so that the client opens its next connection anew. Whoever writes the answer then ends the
/// connection: the fast path and the handlers below the router close it, the router's responder ends Hummingbird's
/// request loop.
package struct ResponseHead: Sendable {
    /// `Server`'s value; nil: no `Server` header.
    package let serverName: String?
    /// The server's time port: what `Date` reads, and what answers are timed on.
    package let clock: any TimePort
    private let dates: HTTPDateCache
    private let isStopping: @Sendable () -> Bool

    /// - Parameter isStopping: Whether a stop has begun (read as each answer is written).
    package init(serverName: String?, clock: any TimePort, isStopping: @escaping @Sendable () -> Bool = { false }) {
        self.serverName = serverName
        self.clock = clock
        self.dates = HTTPDateCache(clock: clock)
        self.isStopping = isStopping
    }

    /// Completes `fields`, an answer's own, with the common fields, for a request whose fields are `request`; returns
    /// whether the connection ends after this answer.
    @discardableResult
    package func complete(_ fields: inout HTTPFields, request: HTTPFields) -> Bool {
        let closes = request[.connection] == "close" || fields[.connection] == "close" || isStopping()
        fields[.date] = dates.current()
        if let serverName { fields[.server] = serverName }
        if closes { fields[.connection] = "close" }
        return closes
    }

    /// The head of an answer written below the router, after which its connection ends (the writer closes it):
    /// `fields`, the body's `Content-Length`, then the common fields with `Connection: close`.
    package func closing(_ status: HTTPResponse.Status, _ fields: HTTPFields = [:], bodyLength: Int) -> HTTPResponse {
        var fields = fields
        fields[.contentLength] = String(bodyLength)
        complete(&fields, request: [.connection: "close"])
        return HTTPResponse(status: status, headerFields: fields)
    }

    /// `error` answered below the router, after which its connection ends: its head (the error's own fields, the
    /// JSON content type and length, the common fields with `Connection: close`, as the router writes a closing error)
    /// and its JSON body.
    package func closing(_ error: APIError) -> (head: HTTPResponse, body: [UInt8]) {
        let body = JSONWriter.bytes(error.body)
        var fields = JSONResponse.headers(error.headers, contentLength: body.count)
        complete(&fields, request: [.connection: "close"])
        return (HTTPResponse(status: error.status, headerFields: fields), body)
    }

    /// `error` answered below the HTTP codec (`SlowClientGuard`, before a request was parsed or instead of one), as
    /// HTTP/1.1 bytes: `closing(_:)`'s head and body, written as NIO's encoder writes them.
    package func closingBytes(_ error: APIError, allocator: ByteBufferAllocator) -> ByteBuffer {
        let (head, body) = closing(error)
        var text = "HTTP/1.1 \(head.status.code) \(head.status.reasonPhrase)\r\n"
        for field in head.headerFields { text += "\(field.name.rawName): \(field.value)\r\n" }
        text += "\r\n"
        var buffer = allocator.buffer(capacity: text.utf8.count + body.count)
        buffer.writeString(text)
        buffer.writeBytes(body)
        return buffer
    }
}
