import NIOCore

/// What an HTTP/2 connection tells its owner about its life, and the liveness rule it follows: a GOAWAY (the
/// provider rotates the connection) and being found dead (a PING unanswered), each at most once per connection.
struct UpstreamConnectionEvents: Sendable {
    /// A silent connection with requests waiting is pinged after this, and given up when the PING goes unanswered for
    /// `pingTimeout`.
    var pingAfter = UpstreamHTTP2Handler.defaultPingAfter
    var pingTimeout = UpstreamHTTP2Handler.defaultPingTimeout
    var goAway: @Sendable () -> Void = {}
    /// The origin, and how many requests were waiting on the connection.
    var dead: @Sendable (UpstreamOrigin, Int) -> Void = { _, _ in }
}
