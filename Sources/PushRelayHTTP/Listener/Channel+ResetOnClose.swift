import NIOCore

#if canImport(Glibc)
import Glibc
#endif

extension Channel {
    /// Makes this socket's next close a reset (`SO_LINGER` 0): for a peer that does not read, whose unsent bytes the
    /// kernel would otherwise keep, with the socket, while it retries them for seconds after the close. Call it on the
    /// channel's event loop, just before closing; a channel that is not a socket is left alone.
    package func resetOnClose() {
        guard isActive, let socket = self as? any SocketOptionProvider else { return }
        _ = socket.setSoLinger(linger(l_onoff: 1, l_linger: 0))
    }
}
