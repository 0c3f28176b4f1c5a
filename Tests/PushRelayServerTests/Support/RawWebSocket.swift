import Foundation
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP client that performs the websocket handshake and then only reads: it never answers a ping, like a
/// phone that vanished without closing its socket. Runs on a thread of its own (blocking reads).
enum RawWebSocket {
    struct Capture {
        /// Everything the server sent: the HTTP response, then raw frames.
        var bytes: [UInt8]
        /// Seconds from the end of the handshake until the server closed the connection (nil: still open at the limit).
        var closedAfter: Double? = nil

        var handshake: String {
            guard let end = headerEnd else { return String(decoding: bytes, as: UTF8.self) }
            return String(decoding: bytes[..<end], as: UTF8.self)
        }

        var headerEnd: Int? {
            let marker: [UInt8] = Array("\r\n\r\n".utf8)
            guard bytes.count >= 4 else { return nil }
            for i in 0...(bytes.count - 4) where Array(bytes[i..<i + 4]) == marker { return i + 4 }
            return nil
        }

        /// Opcodes of the (unmasked, server-sent) frames after the handshake.
        var opcodes: [UInt8] {
            guard var i = headerEnd else { return [] }
            var out: [UInt8] = []
            while i + 2 <= bytes.count {
                let opcode = bytes[i] & 0x0F
                var length = Int(bytes[i + 1] & 0x7F)
                var header = 2
                if length == 126, i + 4 <= bytes.count {
                    length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                    header = 4
                } else if length == 127 {
                    return out
                }
                out.append(opcode)
                i += header + length
            }
            return out
        }
    }

    /// Connects to `/api/websocket` (or `path`), sends the upgrade request and reads until the server closes or
    /// `limit` seconds pass.
    /// `before` is sent first on the same connection (a plain HTTP request, say). `frames` are sent once the handshake's
    /// answer has come, or with the upgrade request, in the same write, if `early`.
    static func watch(
        port: Int,
        path: String = "/api/websocket",
        before: String = "",
        send frames: [[UInt8]] = [],
        early: Bool = false,
        limit: Double,
        until done: @escaping @Sendable (Capture) -> Bool = { _ in false }
    ) async -> Capture {
        await withCheckedContinuation { (c: CheckedContinuation<Capture, Never>) in
            let thread = Thread {
                c.resume(returning: run(port: port, path: path, before: before, frames: frames, early: early, limit: limit, done: done))
            }
            thread.start()
        }
    }

    /// A client frame (masked, with a zero key, so the payload reads as sent).
    static func frame(opcode: UInt8, fin: Bool, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return out + [0, 0, 0, 0] + payload
    }

    private static func run(
        port: Int,
        path: String,
        before: String,
        frames: [[UInt8]],
        early: Bool,
        limit: Double,
        done: (Capture) -> Bool
    ) -> Capture {
        guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 200_000) else { return Capture(bytes: [], closedAfter: nil) }
        defer { close(fd) }
        let request =
            before + "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let first = Array(request.utf8) + (early ? frames.flatMap { $0 } : [])
        _ = first.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        let start = Date()
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending = early ? [] : frames
        while Date().timeIntervalSince(start) < limit {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                bytes.append(contentsOf: buffer[0..<n])
                if !pending.isEmpty, Capture(bytes: bytes).headerEnd != nil {
                    for f in pending { _ = f.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
                    pending = []
                }
                if done(Capture(bytes: bytes, closedAfter: nil)) { return Capture(bytes: bytes, closedAfter: nil) }
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return Capture(bytes: bytes, closedAfter: Date().timeIntervalSince(start))
            }
        }
        return Capture(bytes: bytes, closedAfter: nil)
    }
}

/// Blocking TCP connections to the test server on 127.0.0.1.
enum LoopbackSocket {
    /// Sends `GET /health` on `fd` (a keep-alive connection) and reads until the head of a 200 has arrived, for up to
    /// 10 s. The blocking reads run on a thread of their own: the server in this process needs the concurrency pool.
    static func answersHealth(_ fd: Int32) async throws -> Bool {
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
    /// `receiveBuffer` sets SO_RCVBUF before connecting (a small one makes a client that does not read fill up fast).
    static func connect(port: Int, receiveTimeoutMicroseconds: Int, receiveBuffer: Int32? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
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
