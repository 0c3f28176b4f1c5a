import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking loopback socket that writes and never reads: the client of a flood. Call it on a thread of its own
/// (`onThread`); the server in this process needs the concurrency pool.
package enum FloodingSocket {
    /// Sends `chunk` again and again without blocking (and without reading) until the server stops taking bytes for
    /// `stalledFor` (true), or `limit` bytes were sent or the connection failed (false).
    package static func sendUntilStalled(_ fd: Int32, chunk: [UInt8], limit: Int, stalledFor: Duration = .milliseconds(500)) -> Bool {
        var sent = 0
        var offset = 0
        var lastProgress = ContinuousClock.now
        while sent < limit {
            let n = chunk.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
                offset = (offset + n) % chunk.count
                lastProgress = .now
            } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                if ContinuousClock.now - lastProgress >= stalledFor { return true }
                usleep(5_000)
            } else {
                return false
            }
        }
        return false
    }

    /// Reads (and drops) what arrives until the server closes or resets the connection (true), or `limit` passes.
    package static func waitUntilClosed(_ fd: Int32, limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 { return true }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                    usleep(5_000)
                } else {
                    return true
                }
            }
        }
        return false
    }

    /// Reads until what arrived contains `marker` (true), or `limit` passes.
    package static func read(_ fd: Int32, until marker: String, limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                received += buffer[0..<n]
                if String(decoding: received, as: UTF8.self).contains(marker) { return true }
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return false
            } else {
                usleep(2_000)
            }
        }
        return false
    }
}
