import Foundation
import PushRelayCore

#if canImport(Glibc)
import Glibc
#endif

/// A blocking websocket client whose connection comes from a loopback address of the test's choosing (127.0.0.2,
/// 127.0.0.3, …): a proxy in front of the server sees each device at an address of its own, as behind a real proxy.
/// Text frames only; it answers pings. Every call blocks: use it from `onThread`.
final class BoundWebSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects from `source` to 127.0.0.1:`port` and upgrades `path`; throws unless the answer is 101.
    init(from source: String, port: Int, path: String = "/api/websocket") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) } }
        guard bound == 0, connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect from \(source): \(reason)")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        write(
            Array(
                ("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8
            )
        )
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let end = Self.headerEnd(buffered) {
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
    func send(_ value: JSONValue) {
        let payload = Array(value.jsonString().utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        // A zero mask: the payload goes as it is.
        write(frame + [0, 0, 0, 0] + payload)
    }

    /// The next text frame as JSON; nil when the server closed the connection (a close frame or end of stream).
    /// Throws after `timeout` seconds without one.
    func receive(timeout: Double = 10) throws -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let (opcode, payload, length) = Self.frame(buffered) {
                buffered.removeFirst(length)
                switch opcode {
                case 0x1: return try JSONParser.parse(String(decoding: payload, as: UTF8.self))
                case 0x8: return nil
                case 0x9: write([0x8A, 0x80 | UInt8(payload.count)] + [0, 0, 0, 0] + payload)
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

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i + 4
        }
        return nil
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
