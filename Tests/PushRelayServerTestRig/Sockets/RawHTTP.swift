import Foundation
import PushRelayCore

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 client on a raw socket: writes the requests at once, reads until the server closes or sends
/// nothing for `limit` seconds, and splits what came back into responses (by `Content-Length`).
package enum RawHTTP {
    package struct Response {
        package var status: Int
        package var headers: [String: String]
        /// The header names as written, lowercased, in order.
        package var names: [String] = []
        package var body: String

        package init(status: Int, headers: [String: String], names: [String] = [], body: String) {
            self.status = status
            self.headers = headers
            self.names = names
            self.body = body
        }
        package var json: JSONValue { (try? JSONParser.parse(body)) ?? .null }
    }

    package struct Exchange: Sendable, CustomStringConvertible {
        package var bytes: [UInt8]
        package var closed: Bool
        /// Seconds from the write to the first byte read and to the end of the exchange (the server's close, or
        /// `limit` seconds after the last byte read).
        package var firstByte: Double? = nil
        package var ended: Double = 0

        package init(bytes: [UInt8], closed: Bool, firstByte: Double? = nil, ended: Double = 0) {

            self.bytes = bytes

            self.closed = closed

            self.firstByte = firstByte

            self.ended = ended

        }
        package var description: String {
            "\(closed ? "closed" : "not closed") after \(ended) s, first byte after \(firstByte.map { "\($0) s" } ?? "never"): \(text)"
        }
        package var text: String { String(decoding: bytes, as: UTF8.self) }

        package var responses: [Response] {
            var out: [Response] = []
            var rest = bytes[...]
            let marker: [UInt8] = Array("\r\n\r\n".utf8)
            while let end = rest.indices.first(where: { rest[$0...].starts(with: marker) }) {
                let head = String(decoding: rest[rest.startIndex..<end], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                var names: [String] = []
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    names.append(line[..<colon].lowercased())
                }
                let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
                let length = Int(headers["content-length"] ?? "0") ?? 0
                let bodyStart = end + marker.count
                guard rest.endIndex - bodyStart >= length else { break }
                let body = String(decoding: rest[bodyStart..<bodyStart + length], as: UTF8.self)
                out.append(Response(status: status, headers: headers, names: names, body: body))
                rest = rest[(bodyStart + length)...]
            }
            return out
        }
    }

    /// Runs on a thread of its own: the blocking reads must not hold a thread of the test's concurrency pool, which
    /// the server in this process needs. Every exchange in these tests ends with the server closing the connection,
    /// so the limit is only reached when a test fails. It counts from the last byte read, not from the write: with the
    /// whole suite running on two cores, each notification's durable commits can take a second or more, and a server
    /// answering many requests in turn is slow, not stuck; a stuck one sends nothing for `limit` seconds.
    package static func exchange(port: Int, _ requests: String, limit: Double = 30) async -> Exchange {
        await withCheckedContinuation { (c: CheckedContinuation<Exchange, Never>) in
            Thread { c.resume(returning: run(port: port, requests, limit: limit)) }.start()
        }
    }

    private static func run(port: Int, _ requests: String, limit: Double) -> Exchange {
        guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000) else { return Exchange(bytes: [], closed: false) }
        defer { close(fd) }
        let payload = Array(requests.utf8)
        var sent = 0
        while sent < payload.count {
            let n = payload[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        let start = Date()
        var lastRead = start
        var exchange = Exchange(bytes: [], closed: false)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date().timeIntervalSince(lastRead) < limit {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                lastRead = Date()
                if exchange.bytes.isEmpty { exchange.firstByte = lastRead.timeIntervalSince(start) }
                exchange.bytes.append(contentsOf: buffer[0..<n])
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                exchange.closed = true
                break
            }
        }
        exchange.ended = Date().timeIntervalSince(start)
        return exchange
    }
}
