import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Slow and greedy clients on real sockets: a slowloris, a trickled body, an idle keep-alive connection, and one
/// address opening more connections than its share.
@Suite struct SlowClientTests {
    /// Sends `burst` at once, then `text` one byte every `interval`, on a thread of its own, until the server closes;
    /// reads until the server closes (or `limit` seconds passed).
    static func trickle(port: Int, burst: String = "", _ text: String, interval: Double, limit: Double = 20) async -> RawHTTP.Exchange {
        await withCheckedContinuation { (c: CheckedContinuation<RawHTTP.Exchange, Never>) in
            Thread {
                var exchange = RawHTTP.Exchange(bytes: [], closed: false)
                guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 20_000) else { return c.resume(returning: exchange) }
                defer { close(fd) }
                let start = Date()
                let first = Array(burst.utf8)
                if !first.isEmpty { _ = first.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
                var pending = Array(text.utf8)[...]
                var nextSend = Date()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while Date().timeIntervalSince(start) < limit {
                    if let byte = pending.first, Date() >= nextSend {
                        var b = byte
                        if send(fd, &b, 1, Int32(MSG_NOSIGNAL)) == 1 { pending = pending.dropFirst() }
                        nextSend = Date().addingTimeInterval(interval)
                    }
                    let n = recv(fd, &buffer, buffer.count, 0)
                    if n > 0 {
                        exchange.bytes.append(contentsOf: buffer[0..<n])
                    } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                        exchange.closed = true
                        break
                    }
                }
                exchange.ended = Date().timeIntervalSince(start)
                c.resume(returning: exchange)
            }.start()
        }
    }

    static func configure(_ c: inout PushRelayConfig) {
        c.http.requestTimeoutMs = 1500
        c.http.idleTimeoutMs = 1500
        c.delivery.deadlineMs = 1000
    }

    @Test func aSlowlorisIsAnswered408AndCutOff() async throws {
        try await TestServer.with(configure: Self.configure) { (s: TestServer) async throws in
            // Headers one byte every 100 ms, never finished within the 1.5 s request timeout.
            let head =
                "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-padding: "
                + String(repeating: "a", count: 200)
            let exchange = await Self.trickle(port: s.port, head, interval: 0.1)
            #expect(exchange.closed, "\(exchange)")
            #expect(exchange.ended < 10, "cut off at the request timeout, not when the client gave up (it would take 20 s)")
            let r = try #require(exchange.responses.first, "\(exchange)")
            #expect(r.status == 408)
            #expect(r.json["errorType"] == "RequestTimeout")
            #expect(r.json["message"]?.stringValue?.isEmpty == false)
            // Every answer's head (`ResponseHead`), as the router's closing JSON error.
            #expect(r.names == ["content-type", "content-length", "date", "server", "connection"], "\(r.names)")
            #expect(r.headers["content-length"] == "\(r.body.utf8.count)")
            #expect(r.headers["server"] == "PushRelay")
            #expect(r.headers["date"]?.hasSuffix(" GMT") == true)
            #expect(r.headers["connection"] == "close")
            #expect(try await s.request(.GET, "/health").status == 200)
        }
    }

    @Test func aBodyTrickledByteByByteIsCutOffAndCountsNothing() async throws {
        try await TestServer.with(configure: Self.configure) { (s: TestServer) async throws in
            let body = JSONWriter.string(TestServer.haBody(token: "slow:trickle"))
            let head =
                "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\n\r\n"
            // The head goes at once, then the body a byte every 100 ms: it would take several seconds.
            let exchange = await Self.trickle(port: s.port, burst: head, body, interval: 0.1)
            #expect(exchange.closed)
            #expect(exchange.ended < 10, "cut off at the request timeout, not after the 30 s the body would take")
            #expect(exchange.responses.first?.status == 408, "\(exchange)")
            let limits = try await s.post("/api/checkRateLimits", ["push_token": "slow:trickle"])
            #expect(limits.int("rateLimits", "attempts") == 0)
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosed() async throws {
        // The request itself gets 5 s (a machine busy with the rest of the suite can delay its first bytes past
        // 1.5 s); the idle time after its answer is what is tested.
        try await TestServer.with(configure: {
            Self.configure(&$0)
            $0.http.requestTimeoutMs = 5000
        }) { (s: TestServer) async throws in
            let exchange = await RawHTTP.exchange(port: s.port, "GET /health HTTP/1.1\r\nhost: x\r\n\r\n", limit: 10)
            #expect(exchange.responses.first?.status == 200)
            #expect(exchange.closed, "closed after the idle timeout")
            #expect(exchange.ended >= 1 && exchange.ended < 10, "\(exchange.ended)")
        }
    }

    /// Connects, sends a request, and reads until the server closes: how many bytes came back, and the error that
    /// ended the exchange (nil: an orderly close, or nothing within 10 s).
    static func refusal(port: Int) async -> (bytes: Int, error: Int32?) {
        await withCheckedContinuation { (c: CheckedContinuation<(bytes: Int, error: Int32?), Never>) in
            Thread {
                guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000) else { return c.resume(returning: (0, errno)) }
                defer { close(fd) }
                let request = Array("GET /health HTTP/1.1\r\nhost: x\r\n\r\n".utf8)
                // The reset may come before the request is sent: then the send reports it.
                guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) >= 0 else {
                    return c.resume(returning: (0, errno))
                }
                var bytes = 0
                var buffer = [UInt8](repeating: 0, count: 4096)
                let deadline = Date().addingTimeInterval(10)
                while Date() < deadline {
                    let n = recv(fd, &buffer, buffer.count, 0)
                    if n > 0 {
                        bytes += n
                    } else if n == 0 {
                        return c.resume(returning: (bytes, nil))
                    } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                        return c.resume(returning: (bytes, errno))
                    }
                }
                c.resume(returning: (bytes, nil))
            }.start()
        }
    }

    @Test func oneAddressCannotHoldMoreThanItsShareOfConnections() async throws {
        try await TestServer.with(configure: { c in c.http.maxConnectionsPerAddress = 3 }) { (s: TestServer) async throws in
            var held: [Int32] = []
            defer { for fd in held { close(fd) } }
            for _ in 0..<3 {
                let fd = try #require(LoopbackSocket.connect(port: s.port, receiveTimeoutMicroseconds: 100_000))
                held.append(fd)
                // Served on it: the server has accepted it (and keeps it open).
                #expect(try await LoopbackSocket.answersHealth(fd), "a connection within the budget is served")
            }
            // The fourth is refused at accept: held unread for the refusal delay, then reset, with no answer.
            let refused = await Self.refusal(port: s.port)
            #expect(refused.bytes == 0 && refused.error == ECONNRESET, "\(refused)")
            // One of the three goes: a new connection is admitted again.
            close(held.removeLast())
            try await eventually("a connection is admitted once one closed") {
                let ok = await RawHTTP.exchange(port: s.port, "GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", limit: 10)
                return ok.responses.first?.status == 200
            }
        }
    }
}
