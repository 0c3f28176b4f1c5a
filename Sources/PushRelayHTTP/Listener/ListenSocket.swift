/// Where the server listens: an address it binds itself, or a socket it was handed already listening (systemd's
/// socket activation, `SocketActivation`), which outlives the process.
public enum ListenSocket: Sendable, Equatable, CustomStringConvertible {
    /// Bind `http.host:http.port` (port 0: any free port).
    case address(host: String, port: Int)
    /// Accept on this listening socket, inherited from the process that started this one.
    case inherited(descriptor: Int32)

    public var description: String {
        switch self {
        case .address(let host, let port): "http://\(host):\(port)"
        case .inherited(let descriptor): "the socket passed by systemd (descriptor \(descriptor))"
        }
    }
}
