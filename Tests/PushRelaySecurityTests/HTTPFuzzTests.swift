import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServer
import PushRelayServerTestRig
import PushRelayStore
import Testing

/// Thousands of mutated requests against the running server, over every endpoint: wrong JSON types, huge and
/// negative numbers, deep nesting, invalid UTF-8, oversize headers and bodies, wrong content types, broken chunked
/// encoding, raw garbage, half-open connections. The server stays up (a `/health` probe after each batch), answers
/// no 5xx but 503, and every 4xx/503 answer is JSON with a non-empty `message`.
///
/// Deterministic: the seed is printed; `PUSHRELAY_FUZZ_SEED=<n> swift test --filter HTTPFuzzTests` replays a run.
///
/// Load: thousands of mutated requests, each answer held to a 10 s client limit.
@Suite struct HTTPFuzzTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["PUSHRELAY_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_2026_0019
    static let workers = 3
    static let batches = 8
    static let requestsPerBatch = 100
    static let adminToken = "fuzz-admin-token-0123456789abcdef"

    @Test func mutatedRequestsOverEveryEndpoint() async throws {
        print("HTTPFuzzTests seed: \(Self.seed) (replay with PUSHRELAY_FUZZ_SEED=\(Self.seed))")
        try await withFuzzServer { s in
            let apiKey = try await SQLiteDeviceStore(database: s.database).createAPIKey(label: "fuzz").key
            let context = FuzzRequests.Context(adminToken: Self.adminToken, apiKey: apiKey)
            let port = s.port
            var statuses: [Int: Int] = [:]
            for batch in 0..<Self.batches {
                let report = await withTaskGroup(of: FuzzClient.Report.self) { group in
                    for worker in 0..<Self.workers {
                        let seed = Self.seed &+ UInt64(batch * Self.workers + worker) &* 0x9E37_79B9_7F4A_7C15
                        group.addTask {
                            await FuzzClient.run(port: port, seed: seed, count: Self.requestsPerBatch, context: context)
                        }
                    }
                    var all = FuzzClient.Report()
                    for await r in group {
                        all.problems += r.problems
                        all.statuses.merge(r.statuses, uniquingKeysWith: +)
                    }
                    return all
                }
                let problems = report.problems
                statuses.merge(report.statuses, uniquingKeysWith: +)
                for p in problems.prefix(10) { Issue.record("seed \(Self.seed), batch \(batch): \(p)") }
                let health = await RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", limit: 10)
                #expect(health.responses.first?.status == 200, "the server is up after batch \(batch): \(health)")
                if !problems.isEmpty || health.responses.first?.status != 200 { break }
            }
            print("HTTPFuzzTests answers by status class: \(statuses.sorted { $0.key < $1.key })")
            // Not vacuous: requests got through to the services as well as being refused.
            #expect(statuses[2, default: 0] > 50 && statuses[4, default: 0] > 500, "\(statuses)")
        }
    }

    /// Fixed inputs, always sent: extremes the random mutations reach only rarely. An input the fuzzer finds breaking
    /// the server is added here, so that it stays a test after the fix.
    @Test(arguments: FuzzRequests.fixedCases)
    func fixedCase(_ request: FuzzRequests.Fixed) async throws {
        try await withFuzzServer { s in
            let exchange = await RawHTTP.exchange(port: s.port, request.bytes, limit: 10)
            for problem in FuzzClient.problems(in: exchange.responses) { Issue.record("\(request.name): \(problem)") }
            let health = await RawHTTP.exchange(port: s.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", limit: 10)
            #expect(health.responses.first?.status == 200, "\(health)")
        }
    }

    func withFuzzServer(_ body: @Sendable (TestServer) async throws -> Void) async throws {
        try await withRelayFakes(configure: { c in
            c.adminToken = Self.adminToken
            c.metricsEnabled = true
            // Wrong credentials must not block the fuzzer's address: the admin and calls APIs are fuzzed past their checks.
            c.maxFailedAuthsPerMinute = 1_000_000
            c.http.maxBodyBytes = 16 * 1024
            c.delivery.maxAttempts = 1
            c.matrix.apps = ["im.fuzz.android": .init(provider: "fcm", format: .fcm(.init()))]
        }) { s, _ in try await body(s) }
    }
}

/// A fixed input (raw bytes), sent on a connection of its own.
extension FuzzRequests {
    struct Fixed: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: String
        var testDescription: String { name }
    }

    static let fixedCases: [Fixed] = [
        Fixed(
            name: "deeply nested JSON on the notify path",
            bytes: FuzzClient.request("POST", "/api/sendPush/android/v1", body: Array((String(repeating: "[", count: 100_000)).utf8))
        ),
        Fixed(
            name: "a body declaring more than Int64 can hold",
            bytes: "POST /admin/v1/limits/x HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n{}"
        ),
        Fixed(
            name: "a limit of 2^63 for the admin API",
            bytes: FuzzClient.request("PUT", "/admin/v1/limits/fuzz-token-0123456789", body: Array("{\"limit\": 9223372036854775808}".utf8))
        ),
        Fixed(
            name: "deeply nested JSON on the Matrix path",
            bytes: FuzzClient.request(
                "POST",
                "/_matrix/push/v1/notify",
                body: Array(("{\"notification\":" + String(repeating: "{\"a\":", count: 50_000)).utf8)
            )
        ),
    ]
}

/// What the fuzzer sends: one endpoint's plausible request, then mutations of it.
enum FuzzRequests {
    struct Context: Sendable {
        var adminToken: String
        var apiKey: String
    }

    /// How a request is framed on the wire, which decides how its answer is read.
    enum Framing {
        /// A complete request on a keep-alive connection: exactly one answer follows.
        case keepAlive
        /// Sent on a connection of its own whose write side is then shut: zero or more answers, then a close.
        case oneShot
        /// Half a request, then the connection is closed without reading.
        case halfOpen
    }

    struct Request {
        var method: String
        var path: String
        var headers: [(String, String)]
        var body: [UInt8]
        var framing: Framing = .keepAlive
        /// Raw bytes that replace the whole rendering (garbage, broken chunking).
        var raw: [UInt8]? = nil
    }

    static func haBody(_ r: inout SeededRandom) -> JSONValue {
        [
            "message": "Fuzz", "title": "T", "push_token": .string("fuzz-token-\(Int.random(in: 0..<20, using: &r))-0123456789"),
            "registration_info": ["app_id": "io.homeassistant.companion.android", "app_version": "1", "os_version": "14", "webhook_id": "hook"],
            "data": ["ttl": 0, "priority": "high", "push": ["sound": "default"], "actions": [["action": "A", "title": "a"]]],
        ]
    }

    static func matrixBody(_ r: inout SeededRandom) -> JSONValue {
        [
            "notification": [
                "event_id": "$e", "room_id": "!r:x", "type": "m.room.message", "sender": "@a:x", "counts": ["unread": 1],
                "content": ["msgtype": "m.text", "body": "hi"], "prio": "high",
                "devices": [["app_id": "im.fuzz.android", "pushkey": .string("fuzz-pushkey-\(Int.random(in: 0..<9, using: &r))"), "pushkey_ts": 1]],
            ]
        ]
    }

    /// A plausible request for one of the endpoints, picked at random.
    static func base(_ r: inout SeededRandom, _ c: Context) -> Request {
        let admin = ("Authorization", "Bearer \(Bool.random(using: &r) ? c.adminToken : "wrong-admin-token-000000")")
        let key = ("Authorization", "Bearer \(Bool.random(using: &r) ? c.apiKey : "prk_wrong")")
        let json = ("Content-Type", "application/json")
        func body(_ v: JSONValue) -> [UInt8] { Array(v.jsonString().utf8) }
        let hex = String(repeating: "ab", count: 32)
        switch Int.random(in: 0..<17, using: &r) {
        case 0: return Request(method: "POST", path: "/api/sendPush/android/v1", headers: [json], body: body(haBody(&r)))
        case 1: return Request(method: "POST", path: "/api/sendPushNotification", headers: [json], body: body(haBody(&r)))
        case 2: return Request(method: "POST", path: "/api/sendPush/iOS/v1", headers: [json], body: body(haBody(&r)))
        case 3: return Request(method: "POST", path: "/api/checkRateLimits", headers: [json], body: body(["push_token": "fuzz-token-1-0123456789"]))
        case 4: return Request(method: "POST", path: "/_matrix/push/v1/notify", headers: [json], body: body(matrixBody(&r)))
        case 5:
            let target = ["production/\(hex)", "development/\(hex)", "fcm/fuzz-fcm-token", "fcm/fuzz-fcm-token/extra/x", "sandbox/\(hex)"]
            let encoding = ["aes128gcm", "aesgcm", "gzip", ""].randomElement(using: &r)!
            var headers = [("Content-Encoding", encoding), ("TTL", "60")]
            if encoding == "aesgcm" { headers += [("Encryption", "salt=AAAAAAAAAAAAAAAAAAAAAA"), ("Crypto-Key", "dh=BAAA;p256ecdsa=x")] }
            if Bool.random(using: &r) { headers.append(("Unsubscribe-URL", "http://127.0.0.1:1/unsubscribe")) }
            if Bool.random(using: &r) { headers.append(("Urgency", ["high", "very-low", "bogus"].randomElement(using: &r)!)) }
            let payload = (0..<Int.random(in: 0..<300, using: &r)).map { _ in UInt8.random(in: 0...255, using: &r) }
            return Request(method: "POST", path: "/relay-to/\(target.randomElement(using: &r)!)", headers: headers, body: payload)
        case 6: return Request(method: "GET", path: "/relay-to/_health", headers: [], body: [])
        case 7:
            let device: JSONValue = ["platform": "android", "app_id": "com.example.fuzz", "push_token": "fuzz-device-token", "webhook_id": "hook"]
            return Request(method: "POST", path: "/api/v1/devices", headers: [json, key], body: body(device))
        case 8:
            return Request(
                method: ["DELETE", "POST"].randomElement(using: &r)!,
                path: "/api/v1/devices/\(UUID().uuidString)",
                headers: [key],
                body: []
            )
        case 9: return Request(method: "POST", path: "/api/v1/devices/\(UUID().uuidString)/rotate-key", headers: [key], body: [])
        case 10:
            let call: JSONValue = ["device_id": "nope", "caller_name": "Eve", "caller_id": "eve", "invite": "v=0", "video": true]
            return Request(method: "POST", path: "/api/v1/calls", headers: [json, key], body: body(call))
        case 11:
            let query = ["", "?day=2026-11-21", "?top=5", "?day=bogus", "?top=-1", "?top=99999999999999999999"].randomElement(using: &r)!
            return Request(method: "GET", path: "/admin/v1/quotas\(query)", headers: [admin], body: [])
        case 12: return Request(method: "GET", path: "/admin/v1/quotas/fuzz-token-1-0123456789", headers: [admin], body: [])
        case 13:
            let method = ["PUT", "DELETE"].randomElement(using: &r)!
            return Request(method: method, path: "/admin/v1/limits/fuzz-token-2-0123456789", headers: [json, admin], body: body(["limit": 5]))
        case 14:
            var headers = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]
            headers.append(("Sec-WebSocket-Version", ["13", "8", ""].randomElement(using: &r)!))
            if Bool.random(using: &r) { headers.removeFirst() }
            var req = Request(method: "GET", path: "/api/websocket", headers: headers, body: [])
            req.framing = .oneShot
            return req
        case 15:
            return Request(
                method: "GET",
                path: ["/health", "/ready", "/nope", "/api", "/admin/v1/x"].randomElement(using: &r)!,
                headers: [],
                body: []
            )
        default: return Request(method: "GET", path: "/metrics", headers: [admin], body: [])
        }
    }

    /// `base` with a few random mutations.
    static func mutated(_ r: inout SeededRandom, _ c: Context) -> Request {
        var req = base(&r, c)
        let rounds = Int.random(in: 0...3, using: &r)
        for _ in 0..<rounds { mutate(&req, &r) }
        return req
    }

    static func mutate(_ req: inout Request, _ r: inout SeededRandom) {
        switch Int.random(in: 0..<20, using: &r) {
        case 0, 1, 2, 3:
            // A JSON value of the wrong type, a huge or negative number, deep nesting, a long string, null.
            guard var json = try? JSONParser.parse(req.body) else { return }
            json = mutateJSON(json, &r, depth: 0)
            req.body = Array(json.jsonString().utf8)
        case 4:
            // Numbers JSONValue cannot hold, spliced in as text.
            let number = ["1e400", "-1e400", "99999999999999999999999999", "-9223372036854775809", "1.5e-400", "-0", "0x10", "NaN", "01"]
            req.body = splice(req.body, Array(number.randomElement(using: &r)!.utf8), &r)
        case 5:
            // Invalid UTF-8 inside the body.
            let bad: [[UInt8]] = [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x00]]
            req.body = splice(req.body, bad.randomElement(using: &r)!, &r)
        case 6:
            // Deep nesting.
            let depth = [64, 512, 5000, 20000].randomElement(using: &r)!
            let open = Bool.random(using: &r) ? "[" : "{\"a\":"
            req.body = Array((String(repeating: open, count: depth) + "1").utf8)
        case 7:
            // Truncated or empty.
            req.body = Array(req.body.prefix(Int.random(in: 0...req.body.count, using: &r)))
        case 8:
            // The wrong content type, or none.
            req.headers.removeAll { $0.0 == "Content-Type" }
            if Bool.random(using: &r) {
                req.headers.append(
                    (
                        "Content-Type",
                        ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "∂/∂"].randomElement(using: &r)!
                    )
                )
            }
        case 9:
            // An oversize body (16 KiB is the limit here).
            req.body = [UInt8](repeating: UInt8(ascii: "a"), count: Int.random(in: 16_000...40_000, using: &r))
        case 10:
            // Large headers, under and over the 80 KiB limit.
            let size = [1024, 8 * 1024, 60 * 1024, 90 * 1024].randomElement(using: &r)!
            req.headers.append(("X-Fuzz", String(repeating: "h", count: size)))
            if size > 80 * 1024 { req.framing = .oneShot }
        case 11:
            // Many headers.
            for i in 0..<Int.random(in: 10...300, using: &r) { req.headers.append(("X-Many-\(i)", "v")) }
        case 12:
            // Chunked: well formed, or broken.
            req.framing = .oneShot
            var out: [UInt8] = []
            var rest = req.body[...]
            while !rest.isEmpty {
                let n = min(rest.count, Int.random(in: 1...64, using: &r))
                out += Array(String(n, radix: 16).utf8) + [13, 10] + rest.prefix(n) + [13, 10]
                rest = rest.dropFirst(n)
            }
            out += Array("0\r\n\r\n".utf8)
            if Bool.random(using: &r) {
                let at = Int.random(in: 0..<max(out.count, 1), using: &r)
                out.insert(
                    contentsOf: Array(["ZZ\r\n", "\r\n\r\n", "-1\r\n", "fffffffffffffffff\r\n"].randomElement(using: &r)!.utf8),
                    at: min(at, out.count)
                )
            }
            req.raw = head(req, extra: [("Transfer-Encoding", "chunked")], contentLength: nil) + out
        case 13:
            // Raw garbage on the socket.
            req.framing = .oneShot
            req.raw = (0..<Int.random(in: 1...2000, using: &r)).map { _ in UInt8.random(in: 0...255, using: &r) }
        case 14:
            // Half a request, then close.
            req.framing = .halfOpen
        case 15:
            // A wrong method.
            req.method = ["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "FUZZ"].randomElement(using: &r)!
        case 16:
            // Odd paths: encoded bytes, dot segments, very long, a query.
            let tail = ["%00", "%ff%fe", "/../../etc/passwd", "?a=%zz", String(repeating: "x", count: 4000), "//", "%2F"].randomElement(using: &r)!
            req.path += tail
        case 17:
            // Conflicting or bogus framing headers.
            req.framing = .oneShot
            let extra = [
                [("Content-Length", "5"), ("Content-Length", "6")], [("Content-Length", "-1")], [("Content-Length", "99999999999999999999")],
                [("Transfer-Encoding", "gzip")], [("Transfer-Encoding", "chunked"), ("Content-Length", "3")],
            ].randomElement(using: &r)!
            req.raw = head(req, extra: extra, contentLength: nil) + req.body
        case 18:
            // A Content-Length larger than the body, then the write side closes.
            req.framing = .oneShot
            req.raw = head(req, extra: [], contentLength: req.body.count + Int.random(in: 1...100, using: &r)) + req.body
        default:
            // Header values with control characters or non-ASCII.
            req.framing = .oneShot
            req.headers.append(("X-Bad", ["a\u{1}b", "é", "a\rb", " "].randomElement(using: &r)!))
        }
    }

    static func mutateJSON(_ v: JSONValue, _ r: inout SeededRandom, depth: Int) -> JSONValue {
        let replacements: [JSONValue] = [
            .null, .bool(true), .int(-1), .int(Int64.max), .int(Int64.min), .double(1e308), .double(-0.0), .string(""),
            .string(String(repeating: "é", count: 3000)), .string("\u{0}\u{1F4A9}\u{202E}"), .array([]), .object([:]),
            .array([.array([.array([.object(["x": .null])])])]),
        ]
        switch v {
        case .object(var o) where !o.isEmpty && depth < 4 && Int.random(in: 0..<3, using: &r) > 0:
            let key = o.keys.sorted()[Int.random(in: 0..<o.count, using: &r)]
            switch Int.random(in: 0..<4, using: &r) {
            case 0: o.removeValue(forKey: key)
            case 1: o["fuzz_\(Int.random(in: 0..<100, using: &r))"] = replacements.randomElement(using: &r)!
            default: o[key] = mutateJSON(o[key]!, &r, depth: depth + 1)
            }
            return .object(o)
        case .array(var a) where !a.isEmpty && depth < 4 && Bool.random(using: &r):
            let i = Int.random(in: 0..<a.count, using: &r)
            a[i] = mutateJSON(a[i], &r, depth: depth + 1)
            return .array(a)
        default:
            return replacements.randomElement(using: &r)!
        }
    }

    static func splice(_ body: [UInt8], _ bytes: [UInt8], _ r: inout SeededRandom) -> [UInt8] {
        var out = body
        out.insert(contentsOf: bytes, at: Int.random(in: 0...out.count, using: &r))
        return out
    }

    static func head(_ req: Request, extra: [(String, String)], contentLength: Int?) -> [UInt8] {
        var text = "\(req.method) \(req.path) HTTP/1.1\r\nHost: fuzz\r\n"
        for (k, v) in req.headers + extra { text += "\(k): \(v)\r\n" }
        if let contentLength { text += "Content-Length: \(contentLength)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    static func render(_ req: Request) -> [UInt8] {
        req.raw ?? head(req, extra: [], contentLength: req.body.isEmpty && req.method == "GET" ? nil : req.body.count) + req.body
    }
}

/// Sends the requests on blocking sockets, on a thread of its own, and reports every answer that breaks the rules.
enum FuzzClient {
    static func request(_ method: String, _ path: String, body: [UInt8]) -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            + String(decoding: body, as: UTF8.self)
    }

    static func run(port: Int, seed: UInt64, count: Int, context: FuzzRequests.Context) async -> Report {
        await withCheckedContinuation { (c: CheckedContinuation<Report, Never>) in
            Thread { c.resume(returning: runBlocking(port: port, seed: seed, count: count, context: context)) }.start()
        }
    }

    /// The rules for answers: no 5xx but 503; a 4xx or 503 is JSON with a non-empty `message`.
    static func problems(in responses: [RawHTTP.Response]) -> [String] {
        responses.compactMap { problem(status: $0.status, headers: $0.headers, body: $0.body) }
    }

    static func problem(status: Int, headers: [String: String], body: String) -> String? {
        if status >= 500 && status != 503 { return "answered \(status): \(body.prefix(300))" }
        guard status >= 400 else { return nil }
        guard headers["content-type"] == "application/json" else { return "a \(status) that is not JSON: \(headers) \(body.prefix(200))" }
        guard let message = (try? JSONParser.parse(body))?["message"]?.stringValue, !message.isEmpty else {
            return "a \(status) without a message: \(body.prefix(300))"
        }
        return nil
    }

    /// The problems found, and how many answers of each status class (1…5) came back.
    struct Report: Sendable {
        var problems: [String] = []
        var statuses: [Int: Int] = [:]
    }

    private static func runBlocking(port: Int, seed: UInt64, count: Int, context: FuzzRequests.Context) -> Report {
        var random = SeededRandom(seed: seed)
        var problems: [String] = []
        var statuses: [Int: Int] = [:]
        var connection: Int32? = nil
        defer { if let connection { close(connection) } }
        for i in 0..<count {
            let req = FuzzRequests.mutated(&random, context)
            let bytes = FuzzRequests.render(req)
            let label = "request \(i) of seed \(seed): \(req.method) \(req.path.prefix(80)) (\(bytes.count) bytes, \(req.framing))"
            switch req.framing {
            case .halfOpen:
                guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000) else {
                    problems.append("\(label): cannot connect")
                    continue
                }
                _ = write(fd, Array(bytes.prefix(max(1, bytes.count / 2))))
                close(fd)
            case .oneShot:
                guard let fd = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000) else {
                    problems.append("\(label): cannot connect")
                    continue
                }
                _ = write(fd, bytes)
                shutdown(fd, Int32(SHUT_WR))
                // An accepted upgrade waits for the channel's authentication: its 101 is all there is to read, so the
                // read stops at the end of a 101's head instead of waiting for a close that does not come.
                let received = readUntilClose(fd, limit: 10, stopAfterUpgrade: req.path.hasPrefix("/api/websocket"))
                close(fd)
                let responses = RawHTTP.Exchange(bytes: received.bytes, closed: true).responses
                if received.timedOut { problems.append("\(label): no close within 10 s") }
                for r in responses { statuses[r.status / 100, default: 0] += 1 }
                problems += self.problems(in: responses).map { "\(label): \($0)" }
            case .keepAlive:
                if connection == nil { connection = LoopbackSocket.connect(port: port, receiveTimeoutMicroseconds: 100_000) }
                guard let fd = connection else {
                    problems.append("\(label): cannot connect")
                    continue
                }
                _ = write(fd, bytes)
                switch readOneResponse(fd, isHead: req.method == "HEAD", limit: 10) {
                case .response(let status, let headers, let body, let keepAlive):
                    statuses[status / 100, default: 0] += 1
                    if let p = problem(status: status, headers: headers, body: body) { problems.append("\(label): \(p)") }
                    if !keepAlive {
                        close(fd)
                        connection = nil
                    }
                case .closed:
                    // A keep-alive request may only be refused by closing after an answer (413, 431, 400 are answered).
                    problems.append("\(label): the connection closed without an answer")
                    close(fd)
                    connection = nil
                case .timedOut:
                    problems.append("\(label): no answer within 10 s")
                    close(fd)
                    connection = nil
                }
            }
        }
        return Report(problems: problems, statuses: statuses)
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Reads until the server closes, or (`stopAfterUpgrade`) until a whole `101 Switching Protocols` head is in.
    private static func readUntilClose(_ fd: Int32, limit: Double, stopAfterUpgrade: Bool = false) -> (bytes: [UInt8], timedOut: Bool) {
        let start = Date()
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let upgraded = Array("HTTP/1.1 101 ".utf8)
        let endOfHead = Array("\r\n\r\n".utf8)
        while Date().timeIntervalSince(start) < limit {
            if stopAfterUpgrade && out.starts(with: upgraded)
                && out.indices.contains(where: { out[$0...].starts(with: endOfHead) })
            {
                return (out, false)
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                out.append(contentsOf: buffer[0..<n])
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return (out, false)
            }
        }
        return (out, true)
    }

    enum Read {
        case response(status: Int, headers: [String: String], body: String, keepAlive: Bool)
        case closed
        case timedOut
    }

    /// Reads exactly one answer (framed by `Content-Length`) from a keep-alive connection.
    private static func readOneResponse(_ fd: Int32, isHead: Bool, limit: Double) -> Read {
        let start = Date()
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let marker: [UInt8] = Array("\r\n\r\n".utf8)
        var closed = false
        while Date().timeIntervalSince(start) < limit {
            if let end = data.indices.first(where: { data[$0...].starts(with: marker) }) {
                let head = String(decoding: data[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
                let length = isHead ? 0 : Int(headers["content-length"] ?? "0") ?? 0
                if data.count - (end + 4) >= length {
                    let body = String(decoding: data[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                    let keepAlive = !closed && headers["connection"]?.lowercased() != "close"
                    return .response(status: status, headers: headers, body: body, keepAlive: keepAlive)
                }
            }
            if closed { return data.isEmpty ? .closed : .timedOut }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                data.append(contentsOf: buffer[0..<n])
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                closed = true
            }
        }
        return .timedOut
    }
}
