import Foundation
import PushRelayCore

#if canImport(Glibc)
import Glibc
#endif

/// A blocking websocket client whose connection comes from a loopback address of the test's choosing (127.0.0.2,
/// 127.0.0.3, …): a proxy in front of the server sees each device at an address of its own, as behind a real proxy.
/// Text frames only; it answers pings. Every call blocks: use it from `onThread`.
package final class BoundWebSocket {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    private let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects from `source` to 127.0.0.1:`port` and upgrades `path`; throws unless the answer is 101.
    package init(from source: String, port: Int, path: String = "/api/websocket") throws {
        guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 200_000, from: source) else {
            throw Failure(description: "connect from \(source) to port \(port): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        write(
            Array(
                ("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8
            )
        )
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let end = RawWebSocket.Capture(bytes: buffered).headerEnd {
                let head = String(decoding: buffered[..<end], as: UTF8.self)
                buffered.removeFirst(end)
                guard head.hasPrefix("HTTP/1.1 101") else {
                    close(fd)
                    throw Failure(description: "upgrade refused: \(head)")
                }
                return
            }
            guard fill() else { break }
        }
        close(fd)
        throw Failure(description: "no upgrade answer: \(String(decoding: buffered, as: UTF8.self))")
    }

    deinit { close(fd) }

    /// Sends `value` as one masked text frame.
    package func send(_ value: JSONValue) {
        write(RawWebSocket.frame(opcode: 0x1, fin: true, Array(value.jsonString().utf8)))
    }

    /// The next text frame as JSON; nil when the server closed the connection (a close frame or end of stream).
    /// Throws after `timeout` seconds without one.
    package func receive(timeout: Double = 10) throws -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let (opcode, payload, length) = Self.frame(buffered) {
                buffered.removeFirst(length)
                switch opcode {
                case 0x1: return try JSONParser.parse(String(decoding: payload, as: UTF8.self))
                case 0x8: return nil
                case 0x9: write(RawWebSocket.frame(opcode: 0xA, fin: true, payload))
                default: break
                }
                continue
            }
            guard Date() < deadline else { throw Failure(description: "no frame within \(timeout) s") }
            guard fill() else { return nil }
        }
    }

    /// Reads what is there; false at the end of the stream or on an error other than the read timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n > 0 {
            buffered += chunk[0..<n]
            return true
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    }

    private func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The first whole server frame in `bytes`: opcode, payload and the frame's length (nil when it is not all there).
    private static func frame(_ bytes: [UInt8]) -> (UInt8, [UInt8], Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var header = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            header = 10
        }
        guard bytes.count >= header + length else { return nil }
        return (bytes[0] & 0x0F, Array(bytes[header..<header + length]), header + length)
    }
}
