/// What an HTTP/2 connection tells its owner about its life: a GOAWAY (the provider rotates the connection) and being
/// found dead (a PING unanswered, `UpstreamHTTP2Handler`), each at most once per connection.
struct UpstreamConnectionEvents: Sendable {
    var goAway: @Sendable () -> Void = {}
    /// The origin, and how many requests were waiting on the connection.
    var dead: @Sendable (UpstreamOrigin, Int) -> Void = { _, _ in }
}
