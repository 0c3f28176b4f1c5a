import NIOCore

/// The websocket the server's connections accept, wired by the application (the push channel's sockets): where it is
/// served, its largest frame, and what takes a connection once it is upgraded. The HTTP layer knows no more of it.
struct WebSocketEndpoint: Sendable {
    /// The one path an upgrade is accepted at; another gets 404.
    let path: String
    /// The largest websocket frame read, in bytes.
    let maxFrameBytes: Int
    /// Takes an upgraded connection, whose HTTP handlers are gone, given the client's address (the forwarded client
    /// behind a trusted proxy). Runs on the connection's event loop.
    let attach: @Sendable (_ channel: any Channel, _ peer: String) throws -> Void
}
