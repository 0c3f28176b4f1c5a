import AsyncHTTPClient
import Foundation
import NIOCore
import PushRelayCore
import PushRelayPostgres
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Two real `pushrelay serve` processes on one PostgreSQL database act as one service: an exact quota between them, a
/// device's push channel on one instance reached by a post to the other (confirmed there, or settled once by the
/// cloud), and a killed instance's devices falling back to the cloud within the confirm timeout.
@Suite(.serialized) struct MultiInstanceTests {
    static let confirmTimeoutMs = 1500

    /// Both instances' config: the sandbox provider (every cloud delivery is a delivery-log row), one database.
    static func config(dir: String, url: String, limit: Int) throws -> String {
        let path = dir + "/pushrelay-\(UUID().uuidString.prefix(8)).yaml"
        try """
        http:
          port: 0
        storage:
          backend: postgres
          postgres:
            url: "\(url)"
            pool_size: 8
        quota:
          daily_limit: \(limit)
        channel:
          confirm_timeout_ms: \(confirmTimeoutMs)

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func body(token: String, webhookID: String) -> JSONValue {
        [
            "message": "Hello", "push_token": .string(token),
            "registration_info": [
                "app_id": "io.homeassistant.companion.android", "app_version": "1", "os_version": "14", "webhook_id": .string(webhookID),
            ],
        ]
    }

    /// Two instances on a fresh database; stopped (SIGKILL) at the end whatever happened.
    static func withTwoInstances(limit: Int = 500, _ body: (PostgresTestDatabase, ServerProcess, ServerProcess) async throws -> Void) async throws {
        let pg = try await PostgresTestDatabase.create()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-multi-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let config = try Self.config(dir: dir, url: pg.url, limit: limit)
        let a = try await ServerProcess.start(config: config, logFile: dir + "/a.log")
        let b: ServerProcess
        do {
            b = try await ServerProcess.start(config: config, logFile: dir + "/b.log")
        } catch {
            await a.stop(SIGKILL)
            throw error
        }
        do {
            try await body(pg, a, b)
        } catch {
            print("instance A log:\n\(a.log.suffix(3000))\ninstance B log:\n\(b.log.suffix(3000))")
            await a.stop(SIGKILL)
            await b.stop(SIGKILL)
            throw error
        }
        await a.stop(SIGKILL)
        await b.stop(SIGKILL)
        try? await pg.drop()
    }

    /// Cloud deliveries of a token: the sandbox's delivery-log rows.
    static func cloudDeliveries(_ pg: PostgresTestDatabase, token: String) async throws -> Int {
        Int(
            try await pg.psql("SELECT count(*) FROM delivery_log WHERE push_token = '\(token)' AND outcome = 'delivered'")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        ) ?? -1
    }

    @Test func twoInstancesShareAnExactQuota() async throws {
        try await Self.withTwoInstances(limit: 50) { pg, a, b in
            let token = "multi-quota-token-0123456789"
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<256 {
                    let port = i % 2 == 0 ? a.port : b.port
                    group.addTask {
                        try await CrashSafetyTests.post(port: port, "/api/sendPush/android/v1", Self.body(token: token, webhookID: "hook-q")).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 50, "\(statuses.sorted())")
            #expect(statuses.filter { $0 == 429 }.count == 206)
            for port in [a.port, b.port] {
                let limits = try await CrashSafetyTests.post(port: port, "/api/checkRateLimits", ["push_token": .string(token)])
                #expect(limits.json["rateLimits"]?["successful"] == 50 && limits.json["rateLimits"]?["attempts"] == 256, "\(limits.json)")
            }
            #expect(
                try await pg.psql("SELECT successful FROM daily_usage WHERE push_token = '\(token)'").trimmingCharacters(in: .whitespacesAndNewlines)
                    == "50"
            )
        }
    }

    @Test func aDeviceOnOneInstanceGetsPostsMadeToTheOther() async throws {
        try await Self.withTwoInstances { pg, a, b in
            let storage = try await Storage.postgres(try pg.configuration(poolSize: 2), schema: .check)
            let (channelToken, _) = try await storage.pushChannel.createToken(webhookID: "hook-multi", label: nil, now: Date())
            try await storage.engine.flushAndClose()
            let token = "multi-device-token-0123456789"
            let device = try await WSTestClient.subscribed(port: a.port, token: channelToken, webhookID: "hook-multi")

            // Posted to B, delivered by A's channel, confirmed there: no cloud delivery, no quota used.
            let first = try await CrashSafetyTests.post(port: b.port, "/api/sendPush/android/v1", Self.body(token: token, webhookID: "hook-multi"))
            #expect(first.status == 201, "\(first.json)")
            let messageID = try #require(first.json["messageId"]?.stringValue)
            let event = try await device.receive()
            let confirmID = try #require(event["event"]?["hass_confirm_id"]?.stringValue, "\(event)")
            #expect(messageID == "local:\(confirmID)")
            #expect(event["event"]?["message"] == "Hello")
            device.send(["id": 5, "type": "mobile_app/push_notification_confirm", "webhook_id": "hook-multi", "confirm_id": .string(confirmID)])
            #expect(try await device.receive() == ["id": 5, "type": "result", "success": true, "result": .null])

            // Not confirmed: exactly one cloud delivery, by the instance that took the post.
            let second = try await CrashSafetyTests.post(port: b.port, "/api/sendPush/android/v1", Self.body(token: token, webhookID: "hook-multi"))
            #expect(second.status == 201)
            _ = try await device.receive()
            try await eventually("the unconfirmed message goes to the cloud") { try await Self.cloudDeliveries(pg, token: token) == 1 }
            try await consistently("settled once, not by both instances", for: .milliseconds(2 * Self.confirmTimeoutMs)) {
                try await Self.cloudDeliveries(pg, token: token) == 1
            }
            #expect(try await pg.psql("SELECT count(*) FROM channel_messages").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
            device.close()
        }
    }

    @Test func aKilledInstancesDevicesFallBackToTheCloud() async throws {
        try await Self.withTwoInstances { pg, a, b in
            let storage = try await Storage.postgres(try pg.configuration(poolSize: 2), schema: .check)
            let (channelToken, _) = try await storage.pushChannel.createToken(webhookID: "hook-dead", label: nil, now: Date())
            try await storage.engine.flushAndClose()
            let token = "multi-dead-token-0123456789"
            let device = try await WSTestClient.subscribed(port: a.port, token: channelToken, webhookID: "hook-dead")
            await a.stop(SIGKILL)
            _ = device

            // Right after the kill A still looks alive: the hand-off is settled by B's confirm timer. Later A is
            // stale and B takes the cloud route at once. Either way: one cloud delivery each, within the timeout.
            for n in 1...2 {
                let started = ContinuousClock.now
                let post = try await CrashSafetyTests.post(port: b.port, "/api/sendPush/android/v1", Self.body(token: token, webhookID: "hook-dead"))
                #expect(post.status == 201, "\(post.json)")
                try await eventually("post \(n) reaches the cloud") { try await Self.cloudDeliveries(pg, token: token) == n }
                print("MultiInstanceTests: post \(n) to the cloud after \(ContinuousClock.now - started)")
                if n == 1 {
                    // Only B's heartbeat stays fresh (an instance is stale 3 s after its last heartbeat).
                    try await eventually("instance A is stale") {
                        try await pg.psql("SELECT count(*) FROM instances WHERE heartbeat_at > now() - interval '3 seconds'") == "1"
                    }
                }
            }
            try await consistently("one cloud delivery per post", for: .milliseconds(2 * Self.confirmTimeoutMs)) {
                try await Self.cloudDeliveries(pg, token: token) == 2
            }
        }
    }

    /// A Matrix retry claimed by an instance that is killed while delivering it is delivered once, by another
    /// instance, after the claim's lease (twice the delivery deadline and 2 s).
    @Test func aMatrixRetryClaimedByAKilledInstanceIsDeliveredOnceByAnother() async throws {
        let pg = try await PostgresTestDatabase.create()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-multi-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let env = try await FakeProviderEnvironment.start(directory: dir)
        defer { Task { await env.shutdown() } }
        let options = env.fcmOptions.keys.sorted().map { "    \($0): \(env.fcmOptions[$0]!.jsonString())" }.joined(separator: "\n")
        let config = dir + "/pushrelay.yaml"
        try """
        http:
          port: 0
        storage:
          backend: postgres
          postgres:
            url: "\(pg.url)"
            pool_size: 4
        delivery:
          max_attempts: 1
          deadline_ms: 3000
        providers:
          fcm:
            type: fcm
        \(options)
        matrix:
          apps:
            im.example.android:
              provider: fcm
          retry:
            base_delay: 1s
            poll_interval: 100ms

        """.write(toFile: config, atomically: true, encoding: .utf8)
        // The notify's attempt fails (queued for a retry); the retry hangs on the instance that claimed it.
        let key = "matrix-claimed-by-the-dead"
        env.fcm.script(key, [.unavailable(retryAfter: nil), .delayed(milliseconds: 60_000, .unavailable(retryAfter: nil))])
        let records = { env.fcm.records.filter { $0.token == key } }

        let a = try await ServerProcess.start(config: config, logFile: dir + "/a.log")
        let notify = try await CrashSafetyTests.post(
            port: a.port,
            "/_matrix/push/v1/notify",
            [
                "notification": [
                    "event_id": "$claimed", "room_id": "!r:example.org", "type": "m.room.message", "sender": "@a:example.org",
                    "counts": ["unread": 1],
                    // One device delivered at once (a notify where every device failed is refused for the homeserver
                    // to retry), one queued for the retry.
                    "devices": [
                        ["app_id": "im.example.android", "pushkey": "matrix-delivered-now"],
                        ["app_id": "im.example.android", "pushkey": .string(key)],
                    ],
                ]
            ]
        )
        #expect(notify.status == 200 && notify.json == ["rejected": []], "\(notify.json)")
        try await eventually("instance A claims the retry and is delivering it") { records().count == 2 }
        await a.stop(SIGKILL)

        let b = try await ServerProcess.start(config: config, logFile: dir + "/b.log")
        defer { kill(b.pid, SIGKILL) }
        try await eventually("instance B delivers the retry after the lease", seconds: 40) { records().contains { $0.status == 200 } }
        try await eventually("the queue is empty") {
            try await pg.psql("SELECT count(*) FROM matrix_retry_queue") == "0"
        }
        try await consistently("delivered once", for: .seconds(2)) { records().filter { $0.status == 200 }.count == 1 }
        #expect(records().count == 3, "the notify's attempt, A's cut-off retry, B's retry: \(records().map(\.status))")
        try? await pg.drop()
    }
}
