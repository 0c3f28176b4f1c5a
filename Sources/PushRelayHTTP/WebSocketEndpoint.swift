import NIOCore

/// The websocket the server's connections accept, wired by the application (the push channel's sockets): where it is
/// served, its largest frame, and what takes a connection once it is upgraded. The HTTP layer knows no more of it.
package struct WebSocketEndpoint: Sendable {
    /// The one path an upgrade is accepted at; another gets 404.
    package let path: String
    /// The largest websocket frame read, in bytes.
    package let maxFrameBytes: Int
    /// Takes an upgraded connection, whose HTTP handlers are gone, given the client's address (the forwarded client
    /// behind a trusted proxy). Runs on the connection's event loop.
    package let attach: @Sendable (_ channel: any Channel, _ peer: String) throws -> Void

    package init(path: String, maxFrameBytes: Int, attach: @escaping @Sendable (_ channel: any Channel, _ peer: String) throws -> Void) {
        self.path = path
        self.maxFrameBytes = maxFrameBytes
        self.attach = attach
    }
}
