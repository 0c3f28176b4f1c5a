import AsyncHTTPClient
import Foundation
import NIOCore
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `pushrelay` binary under concurrent Home Assistant load, killed with SIGKILL at random moments and started
/// again on the same database, delivering to the fake FCM: what it answered 201 is counted exactly once and was
/// delivered, no token ever passes its limit, `checkRateLimits` agrees with the database, and what was queued before a
/// kill (a Matrix device's retry, notifications for an offline websocket device) is delivered after it.
@Suite(.serialized) struct CrashSafetyTests {
    enum Outcome: Sendable, Equatable {
        case accepted  // 201
        case limited  // 429
        case refused(Int)  // another answer: nothing promised
        case unknown  // no answer (the process died under it): may or may not have been counted
    }

    static let limit = 4
    static let tokens = (0..<200).map { "crash:token-\($0)" }

    /// What every client saw, by request number (the message text is `crash-<n>`, its token `tokens[n % count]`).
    final class Ledger: Sendable {
        private let outcomes = Locked<[Int: Outcome]>([:])
        private let next = Atomic<Int>(0)
        func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
        func record(_ n: Int, _ o: Outcome) { outcomes.withLock { $0[n] = o } }
        var all: [Int: Outcome] { outcomes.withLock { $0 } }
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    /// The storage engines the crash test runs on: the SQLite file in the test's directory, or a fresh PostgreSQL
    /// database (the kills then cut off the instance's connections mid-transaction too).
    enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    static func config(dir: String, env: FakeProviderEnvironment, storage: String) -> String {
        """
        http:
          port: 0
        \(storage)
        quota:
          daily_limit: \(limit)
        delivery:
          max_attempts: 1
        providers:
          fcm:
            type: fcm
        \(env.fcmYAML)
        apps:
          - match: "io.local.*"
            provider: none
          - match: "*"
            provider: fcm
        matrix:
          apps:
            im.example.android:
              provider: fcm
          retry:
            base_delay: 2s
            poll_interval: 100ms

        """
    }

    /// The load's HTTP client: a refused connection (the server was just killed) fails at once instead of being
    /// retried until the request's timeout.
    static let http = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: .init(timeout: .init(connect: .milliseconds(250), read: .seconds(10)))
    )

    /// Posts until `stop` is set; each request's outcome goes to the ledger.
    static func client(port: Int, ledger: Ledger, stop: Flag) async {
        while !stop.isSet {
            let n = ledger.take()
            let token = tokens[n % tokens.count]
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/sendPush/android/v1")
            request.method = .POST
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: JSONWriter.bytes(TestServer.haBody(token: token, message: "crash-\(n)"))))
            do {
                let response = try await http.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                switch response.status.code {
                case 201: ledger.record(n, .accepted)
                case 429: ledger.record(n, .limited)
                default: ledger.record(n, .refused(Int(response.status.code)))
                }
            } catch {
                ledger.record(n, .unknown)
                return  // the server is gone; the round is over for this client
            }
        }
    }

    @Test(arguments: Engine.allCases)
    func killedUnderLoadItLosesNothingItAnsweredAndCountsNothingTwice(engine: Engine) async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let pg = engine == .postgres ? try await PostgresTestDatabase.create() : nil
        let storage =
            pg.map { "storage:\n  backend: postgres\n  postgres:\n    url: \"\($0.url)\"\n    pool_size: 8" }
            ?? "storage:\n  sqlite_path: \(dir)/pushrelay.sqlite"
        let env = try await FakeProviderEnvironment.start(directory: dir)
        defer { Task { await env.shutdown() } }
        let config = dir + "/pushrelay.yaml"
        try Self.config(dir: dir, env: env, storage: storage).write(toFile: config, atomically: true, encoding: .utf8)
        let ledger = Ledger()
        var server = try await ServerProcess.start(config: config, logFile: dir + "/serve-0.log")

        // A Matrix device that fails once is queued for a retry (2 s later, after the first kill below).
        env.fcm.script("matrix-flaky", [.unavailable(retryAfter: 2)])
        let matrix = try await Self.post(
            port: server.port,
            "/_matrix/push/v1/notify",
            [
                "notification": [
                    "event_id": "$crash", "room_id": "!r:example.org", "type": "m.room.message", "sender": "@a:example.org",
                    "counts": ["unread": 1],
                    "devices": [
                        ["app_id": "im.example.android", "pushkey": "matrix-ok"],
                        ["app_id": "im.example.android", "pushkey": "matrix-flaky"],
                    ],
                ]
            ]
        )
        #expect(matrix.status == 200)
        #expect(matrix.json == ["rejected": []])

        // Notifications for a local-only app whose device is offline wait in the database for it.
        let offline = "crash-offline-device-" + String(repeating: "d", count: 24)
        for i in 0..<3 {
            let body: JSONValue = [
                "message": .string("queued-\(i)"), "push_token": .string(offline),
                "registration_info": ["app_id": "io.local.app", "webhook_id": "hook-offline"],
            ]
            let queued = try await Self.post(port: server.port, "/api/sendPush/android/v1", body)
            #expect(queued.status == 201)
            #expect(queued.json["messageId"]?.stringValue?.hasPrefix("queued:") == true)
        }

        var kills = 0
        for round in 0..<4 {
            let stop = Flag()
            let port = server.port
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<32 { group.addTask { await Self.client(port: port, ledger: ledger, stop: stop) } }
                try? await Task.sleep(for: .milliseconds(Int.random(in: 150...700)))
                if round < 3 {
                    let status = await server.stop(SIGKILL)
                    #expect(status == 128 + SIGKILL)
                    kills += 1
                }
                stop.set()
            }
            if round < 3 { server = try await ServerProcess.start(config: config, logFile: dir + "/serve-\(round + 1).log") }
        }
        #expect(kills == 3)

        let outcomes = ledger.all
        let count = { (o: Outcome) in outcomes.values.filter { $0 == o }.count }
        print(
            "crash test: \(outcomes.count) requests, \(count(.accepted)) answered 201, \(count(.limited)) 429, \(count(.unknown)) cut off by \(kills) kills"
        )
        #expect(outcomes.values.contains(.accepted))
        #expect(outcomes.values.contains(.unknown), "the kills cut requests off")
        #expect(!outcomes.values.contains { if case .refused(let s) = $0 { return s != 503 } else { return false } }, "\(outcomes.values)")

        // The Matrix device queued before the kills is delivered by a later process.
        try await eventually("the queued Matrix device is delivered after the restarts", seconds: 30) {
            env.fcm.records.contains { $0.token == "matrix-flaky" && $0.status == 200 }
        }

        // The offline device connects to the last process and gets what was queued before the kills.
        let device = try await WSTestClient.subscribed(port: server.port, token: offline, webhookID: "hook-offline", supportConfirm: false)
        var received: [String] = []
        for _ in 0..<3 { received.append(try await device.receive()["event"]?["message"]?.stringValue ?? "?") }
        #expect(received.sorted() == ["queued-0", "queued-1", "queued-2"])

        // Every answered notification was delivered (at least once).
        let delivered = Set(env.fcm.records.filter { $0.status == 200 }.compactMap { $0.body?["message"]?["data"]?["message"]?.stringValue })
        for (n, o) in outcomes where o == .accepted {
            #expect(delivered.contains("crash-\(n)"), "crash-\(n) was answered 201 but never reached FCM")
        }

        // Counted exactly once: between what was answered 201 and that plus the requests cut off without an answer.
        var reported: [String: Int] = [:]
        for (i, token) in Self.tokens.enumerated() {
            let mine = outcomes.filter { $0.key % Self.tokens.count == i }.map(\.value)
            let answered = mine.filter { $0 == .accepted }.count
            let cutOff = mine.filter { $0 == .unknown }.count
            let limits = try await Self.post(port: server.port, "/api/checkRateLimits", ["push_token": .string(token)])
            let successful = try #require(limits.json["rateLimits"]?["successful"]?.doubleValue.map { Int($0) })
            reported[token] = successful
            #expect(
                answered <= successful && successful <= answered + cutOff,
                "\(token): \(answered) answered, \(cutOff) cut off, \(successful) counted"
            )
            #expect(successful <= Self.limit, "\(token) went past its limit")
            #expect(answered <= Self.limit)
        }

        // What checkRateLimits said is what the database holds, read after a clean stop.
        #expect(await server.stop(SIGTERM) == 0, "\(server.log)")
        let query = "SELECT push_token, successful FROM daily_usage WHERE push_token LIKE 'crash:%'"
        var stored: [String: Int] = [:]
        if let pg {
            for line in try await pg.psql(query).split(separator: "\n") {
                let fields = line.split(separator: "|")
                if fields.count == 2 { stored[String(fields[0])] = Int(fields[1]) }
            }
            try? await pg.drop()
        } else {
            // The file as the next start would find it, read through the storage contract (today and yesterday: the
            // run may cross midnight UTC).
            let storage = try Storage.sqlite(path: dir + "/pushrelay.sqlite", schema: .check)
            let today = UTCDay(Date())
            for day in [today.adding(days: -1), today] {
                for row in try await storage.admin.list(day: day, top: nil) where row.pushToken.hasPrefix("crash:") {
                    stored[row.pushToken, default: 0] += row.successful
                }
            }
            try await storage.engine.flushAndClose()
        }
        for token in Self.tokens { #expect((stored[token] ?? 0) == reported[token], "\(token)") }
    }

    static func post(port: Int, _ path: String, _ body: JSONValue) async throws -> (status: Int, json: JSONValue) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: JSONWriter.bytes(body)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONParser.parse(Array(buffer: bytes))) ?? .null)
    }
}
