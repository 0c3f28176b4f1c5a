import HTTPTypes
import PushRelayCore

/// The fields every answer's head carries, on the router (`ServerApplication`'s responder) and on the fast path
/// (`NotifyFastPath`) alike: `Date` (one cache per server, on the server's time port), `Server`, and
/// `Connection: close` when the connection ends after the answer. One per server.
///
/// The connection ends after an answer when its request asks for it (HTTP/1.0 without keep-alive, `Connection: close`,
/// CONNECT, or read once a stop began: `ConnectionCloseRule` writes all of these into the request as
/// `Connection: close`), when the answer itself says so (a body past the limit: `BodyLimit.tooLarge`), or when a stop
/// has begun by the time the answer is written (`ServerLifecycle`), so that the client opens its next connection anew.
/// Whoever writes the answer then ends the connection: the fast path closes it, the router's responder ends
/// Hummingbird's request loop.
struct ResponseHead: Sendable {
    /// `Server`'s value; nil: no `Server` header.
    let serverName: String?
    /// The server's time port: what `Date` reads, and what answers are timed on.
    let clock: any TimePort
    private let dates: HTTPDateCache
    private let isStopping: @Sendable () -> Bool

    /// - Parameter isStopping: Whether a stop has begun (read as each answer is written).
    init(serverName: String?, clock: any TimePort, isStopping: @escaping @Sendable () -> Bool = { false }) {
        self.serverName = serverName
        self.clock = clock
        self.dates = HTTPDateCache(clock: clock)
        self.isStopping = isStopping
    }

    /// Completes `fields`, an answer's own, with the common fields, for a request whose fields are `request`; returns
    /// whether the connection ends after this answer.
    @discardableResult
    func complete(_ fields: inout HTTPFields, request: HTTPFields) -> Bool {
        let closes = request[.connection] == "close" || fields[.connection] == "close" || isStopping()
        fields[.date] = dates.current()
        if let serverName { fields[.server] = serverName }
        if closes { fields[.connection] = "close" }
        return closes
    }
}
