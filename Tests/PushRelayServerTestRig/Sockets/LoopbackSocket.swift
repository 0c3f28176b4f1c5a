import Foundation
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// Blocking TCP connections to the test server on 127.0.0.1.
package enum LoopbackSocket {
    /// Sends `GET /health` on `fd` (a keep-alive connection) and reads until the head of a 200 has arrived, for up to
    /// 10 s. The blocking reads run on a thread of their own: the server in this process needs the concurrency pool.
    package static func answersHealth(_ fd: Int32) async throws -> Bool {
        try await onThread { answersHealthBlocking(fd) }
    }

    private static func answersHealthBlocking(_ fd: Int32) -> Bool {
        let request = Array("GET /health HTTP/1.1\r\nhost: x\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return false }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                received += buffer[0..<n]
                let text = String(decoding: received, as: UTF8.self)
                if text.contains("\r\n\r\n") { return text.hasPrefix("HTTP/1.1 200") }
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return false
            }
        }
        return false
    }

    /// A connected socket whose reads time out after `receiveTimeoutMicroseconds` (so a reader can watch a clock).
    /// `receiveBuffer` sets SO_RCVBUF before connecting (a small one makes a client that does not read fill up fast);
    /// `noDelay` sends each write at once (TCP_NODELAY). `source` is the loopback address the connection comes from
    /// (127.0.0.2, say: a proxy in front of the server then sees a client of its own). Nil when the connection is
    /// refused.
    package static func connect(
        port: Int,
        receiveTimeoutMicroseconds: Int,
        receiveBuffer: Int32? = nil,
        noDelay: Bool = false,
        from source: String? = nil
    ) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                return nil
            }
        }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        if noDelay {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        var timeout = timeval(tv_sec: receiveTimeoutMicroseconds / 1_000_000, tv_usec: receiveTimeoutMicroseconds % 1_000_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }
}
