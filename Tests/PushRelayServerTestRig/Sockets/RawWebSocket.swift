import Foundation
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP client that performs the websocket handshake and then only reads: it never answers a ping, like a
/// phone that vanished without closing its socket. Runs on a thread of its own (blocking reads).
package enum RawWebSocket {
    package struct Capture {
        /// Everything the server sent: the HTTP response, then raw frames.
        package var bytes: [UInt8]
        /// Seconds from the end of the handshake until the server closed the connection (nil: still open at the limit).
        package var closedAfter: Double? = nil

        package var handshake: String {
            guard let end = headerEnd else { return String(decoding: bytes, as: UTF8.self) }
            return String(decoding: bytes[..<end], as: UTF8.self)
        }

        package var headerEnd: Int? {
            let marker: [UInt8] = Array("\r\n\r\n".utf8)
            guard bytes.count >= 4 else { return nil }
            for i in 0...(bytes.count - 4) where Array(bytes[i..<i + 4]) == marker { return i + 4 }
            return nil
        }

        /// Opcodes of the (unmasked, server-sent) frames after the handshake.
        package var opcodes: [UInt8] {
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
    package static func watch(
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
    package static func frame(opcode: UInt8, fin: Bool, _ payload: [UInt8]) -> [UInt8] {
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
