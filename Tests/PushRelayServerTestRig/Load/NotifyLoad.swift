import Foundation
import PushRelayCore
import PushRelayTestHarness

#if canImport(Glibc)
import Glibc
#endif

/// Clients that post Home Assistant notifications without pause, each on a keep-alive connection of its own, like
/// Home Assistant's HTTP client: a connection the server closed (or answered with `Connection: close`) is not used
/// again, and the next request opens a new one, to the port `route` names at that moment (a load balancer's choice).
/// Every client runs on a thread of its own (blocking sockets), so that the servers in this process keep the
/// concurrency pool. Every request ends in one of three ways: answered (its status), refused (the connection could not
/// be opened: the request was never sent), or lost (sent, and the connection ended without an answer: what Home
/// Assistant reports as a failed notification).
package final class NotifyLoad: Sendable {
    package struct Tally: Sendable, CustomStringConvertible {
        /// Answers by status.
        package var answered: [Int: Int] = [:]
        /// Answers by the port that gave them.
        package var answeredBy: [Int: Int] = [:]
        package var refused = 0
        package var lost = 0
        /// What happened to the first lost requests.
        package var losses: [String] = []
        /// Answers that said `Connection: close`.
        package var closingAnswers = 0

        package var answeredTotal: Int { answered.values.reduce(0, +) }
        package var description: String {
            "answered \(answered.sorted { $0.key < $1.key }), refused \(refused), lost \(lost) \(losses.prefix(5)), \(closingAnswers) with Connection: close"
        }
    }

    private struct State {
        var tally = Tally()
        var stopping = false
        var running = 0
        var finished: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())
    private let route: @Sendable () -> Int
    private let clients: Int
    /// How long a request may wait for its answer (it may sit in a listening socket's queue while a server restarts).
    private let answerLimit: Double

    /// - Parameter route: The port a new connection goes to.
    package init(clients: Int, answerLimit: Double = 20, route: @escaping @Sendable () -> Int) {
        self.clients = clients
        self.answerLimit = answerLimit
        self.route = route
    }

    package var tally: Tally { state.withLock { $0.tally } }

    package func start() {
        state.withLock { $0.running = clients }
        for client in 0..<clients {
            Thread { [self] in
                run(client: client)
                let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    s.running -= 1
                    guard s.running == 0 else { return [] }
                    defer { s.finished = [] }
                    return s.finished
                }
                for w in waiters { w.resume() }
            }.start()
        }
    }

    /// Asks every client to stop after its request under way, waits for them, and returns the tally.
    package func stop() async -> Tally {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s -> Bool in
                s.stopping = true
                guard s.running > 0 else { return true }
                s.finished.append(c)
                return false
            }
            if done { c.resume() }
        }
        return tally
    }

    /// Waits until `n` more answers than now have come (up to `limit` seconds); returns whether they did.
    package func waitForAnswers(_ n: Int, limit: Duration = .seconds(20)) async -> Bool {
        let target = tally.answeredTotal + n
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if tally.answeredTotal >= target { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    private enum Outcome {
        case answered(status: Int, closes: Bool)
        case lost(String)
    }

    private func run(client: Int) {
        var fd: Int32 = -1
        var port = 0
        var sequence = 0
        while !state.withLock({ $0.stopping }) {
            if fd >= 0, Self.peerClosed(fd) {
                close(fd)
                fd = -1
            }
            if fd < 0 {
                port = route()
                guard let opened = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000, noDelay: true) else {
                    state.withLock { $0.tally.refused += 1 }
                    usleep(2_000)
                    continue
                }
                fd = opened
            }
            sequence += 1
            let body = TestServer.haBody(token: "load:\(client):\(sequence)").jsonString()
            let request =
                "POST /api/sendPush/android/v1 HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\n\r\n\(body)"
            switch exchange(fd, request) {
            case .answered(let status, let closes):
                state.withLock { s in
                    s.tally.answered[status, default: 0] += 1
                    s.tally.answeredBy[port, default: 0] += 1
                    if closes { s.tally.closingAnswers += 1 }
                }
                if closes {
                    close(fd)
                    fd = -1
                }
            case .lost(let why):
                state.withLock { s in
                    s.tally.lost += 1
                    if s.tally.losses.count < 20 { s.tally.losses.append("client \(client) request \(sequence): \(why)") }
                }
                close(fd)
                fd = -1
            }
        }
        if fd >= 0 { close(fd) }
    }

    private func exchange(_ fd: Int32, _ request: String) -> Outcome {
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return .lost("send: \(String(cString: strerror(errno))) after \(sent) bytes")
            }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(answerLimit)
        while ContinuousClock.now < deadline {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                received += buffer[0..<n]
                if let answer = Self.complete(received) { return answer }
            } else if n == 0 {
                return .lost("closed after \(received.count) bytes of the answer")
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                return .lost("recv: \(String(cString: strerror(errno))) after \(received.count) bytes of the answer")
            }
        }
        return .lost("no answer within \(answerLimit) s")
    }

    /// The answer, once its head and its whole body have arrived.
    private static func complete(_ bytes: [UInt8]) -> Outcome? {
        let marker: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<$0 + 4].elementsEqual(marker) }) else {
            return nil
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        var length = 0
        var closes = false
        for line in head.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2 else { continue }
            if parts[0] == "content-length" { length = Int(parts[1]) ?? 0 }
            if parts[0] == "connection" && parts[1] == "close" { closes = true }
        }
        guard bytes.count - (end + 4) >= length else { return nil }
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        return .answered(status: status, closes: closes)
    }

    /// Whether the server has closed the connection (an end of file or a reset is waiting to be read), as a client
    /// checks before reusing a pooled connection.
    private static func peerClosed(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }
}
