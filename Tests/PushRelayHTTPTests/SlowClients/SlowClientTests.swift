import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Slow and greedy clients on real sockets: a slowloris, a trickled body, an idle keep-alive connection, and one
/// address opening more connections than its share. The server's time is a stepped `ManualClock` the client moves
/// between its bytes: the request and idle timeouts and the refusal delay are the server's, and no test waits for them
/// in real time.
@Suite struct SlowClientTests {
    /// What the server's clock is stepped by between the client's reads.
    static let step = Duration.milliseconds(100)

    /// Sends `burst` at once, then `text` one byte for every `stepsPerByte` steps of the server's clock, reading what
    /// the server writes between steps (each read waits up to 20 ms), until the server closes or `limit` of its time
    /// has passed. With `afterAnswer`, the clock is not stepped before the server's first bytes arrive (within 20 s).
    /// `ended` is the server's time stepped.
    ///
    /// The clock moves faster than the server may read on a loaded machine, so a test gives the server far more of
    /// its time than it needs (a timeout it is not about is long, a byte comes once a second of its time): how early
    /// the server reads does not change what it answers.
    static func trickle(
        port: Int,
        clock: ManualClock,
        burst: String = "",
        _ text: String,
        stepsPerByte: Int = 10,
        afterAnswer: Bool = false,
        limit: Duration = .seconds(60)
    ) async throws -> RawHTTP.Exchange {
        try await onThread {
            var exchange = RawHTTP.Exchange(bytes: [], closed: false)
            guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 20_000) else { return exchange }
            defer { close(fd) }
            let first = Array(burst.utf8)
            if !first.isEmpty { _ = first.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            var pending = Array(text.utf8)[...]
            var steps = 0
            let started = Date()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while step * steps < limit {
                if steps % stepsPerByte == 0, var byte = pending.first, send(fd, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 {
                    pending = pending.dropFirst()
                }
                let n = recv(fd, &buffer, buffer.count, 0)
                if n > 0 {
                    exchange.bytes.append(contentsOf: buffer[0..<n])
                    continue
                } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    exchange.closed = true
                    break
                }
                if afterAnswer, exchange.bytes.isEmpty {
                    if Date().timeIntervalSince(started) > 20 { break }
                    continue
                }
                clock.advance(by: step)
                steps += 1
            }
            exchange.ended = step * steps / .seconds(1)
            return exchange
        }
    }

    /// The request and idle timeouts 1.5 s of the server's time. The idle timeout is longer where a test is about the
    /// request's: until the server has read a request's first byte, its idle clock runs.
    static func configure(idle idleTimeoutMs: Int64 = 1500) -> (inout PushRelayConfig) -> Void {
        { c in
            c.http.requestTimeoutMs = 1500
            c.http.idleTimeoutMs = idleTimeoutMs
            c.delivery.deadlineMs = 1000
        }
    }

    @Test func aSlowlorisIsAnswered408AndCutOff() async throws {
        let clock = ManualClock()
        try await TestServer.with(clock: clock, configure: Self.configure(idle: 60_000)) { (s: TestServer) async throws in
            // Headers one byte a second of the server's time, never finished within the 1.5 s request timeout.
            let head =
                "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-padding: "
                + String(repeating: "a", count: 200)
            let exchange = try await Self.trickle(port: s.port, clock: clock, head)
            #expect(exchange.closed, "\(exchange)")
            #expect(exchange.ended < 60, "cut off by the server, not when the client gave up")
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
        let clock = ManualClock()
        try await TestServer.with(clock: clock, configure: Self.configure(idle: 60_000)) { (s: TestServer) async throws in
            let body = JSONWriter.string(TestServer.haBody(token: "slow:trickle"))
            let head =
                "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\n\r\n"
            // The head goes at once, then the body a byte a second of the server's time: it would take minutes.
            let exchange = try await Self.trickle(port: s.port, clock: clock, burst: head, body)
            #expect(exchange.closed)
            #expect(exchange.ended < 60, "cut off by the server, not after the body's \(body.utf8.count) s")
            #expect(exchange.responses.first?.status == 408, "\(exchange)")
            let limits = try await s.post("/api/checkRateLimits", ["push_token": "slow:trickle"])
            #expect(limits.int("rateLimits", "attempts") == 0)
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosed() async throws {
        let clock = ManualClock()
        try await TestServer.with(clock: clock, configure: Self.configure()) { (s: TestServer) async throws in
            // The request goes at once and is answered; then only the server's clock moves.
            let exchange = try await Self.trickle(port: s.port, clock: clock, burst: "GET /health HTTP/1.1\r\nhost: x\r\n\r\n", "", afterAnswer: true)
            #expect(exchange.responses.first?.status == 200, "\(exchange)")
            #expect(exchange.closed, "closed after the idle timeout")
            #expect(exchange.ended >= 1.5 && exchange.ended < 10, "\(exchange.ended)")
        }
    }

    /// Connects, sends a request, and reads until the server closes, stepping the server's clock by `step` after each
    /// read that waited 100 ms: how many bytes came back, and the error that ended the exchange (nil: an orderly close,
    /// or nothing within 10 s of the server's time).
    static func refusal(port: Int, clock: ManualClock) async throws -> (bytes: Int, error: Int32?) {
        try await onThread {
            guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000) else { return (0, errno) }
            defer { close(fd) }
            let request = Array("GET /health HTTP/1.1\r\nhost: x\r\n\r\n".utf8)
            // The reset may come before the request is sent: then the send reports it.
            guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) >= 0 else { return (0, errno) }
            var bytes = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            var stepped = Duration.zero
            while stepped < .seconds(10) {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n > 0 {
                    bytes += n
                } else if n == 0 {
                    return (bytes, nil)
                } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    return (bytes, errno)
                } else {
                    clock.advance(by: step)
                    stepped += step
                }
            }
            return (bytes, nil)
        }
    }

    @Test func oneAddressCannotHoldMoreThanItsShareOfConnections() async throws {
        let clock = ManualClock()
        try await TestServer.with(clock: clock, configure: { c in c.http.maxConnectionsPerAddress = 3 }) { (s: TestServer) async throws in
            var held: [Int32] = []
            defer { for fd in held { close(fd) } }
            for _ in 0..<3 {
                let fd = try #require(LoopbackSocket.connect(port: s.port, receiveTimeoutMicroseconds: 100_000))
                held.append(fd)
                // Served on it: the server has accepted it (and keeps it open).
                #expect(try await LoopbackSocket.answersHealth(fd), "a connection within the budget is served")
            }
            // The fourth is refused at accept: held unread for the refusal delay (1 s of the server's time), then reset,
            // with no answer.
            let refused = try await Self.refusal(port: s.port, clock: clock)
            #expect(refused.bytes == 0 && refused.error == ECONNRESET, "\(refused)")
            // One of the three goes: a new connection is admitted again.
            close(held.removeLast())
            // Until the server has seen the close, a new connection is still refused (held until the clock is stepped):
            // such a try gives up after 1 s.
            try await eventually("a connection is admitted once one closed") {
                let ok = await RawHTTP.exchange(port: s.port, "GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", limit: 1)
                return ok.responses.first?.status == 200
            }
        }
    }
}
