import AsyncHTTPClient
import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// PostgreSQL restarted under load, with the real `pushrelay` binary on it: requests during the outage get 503 with a
/// JSON message, the service comes back by itself (no restart of PushRelay), and every notification answered 201 is
/// counted once.
@Suite(.serialized) struct PostgresRestartTests {
    final class Outcomes: Sendable {
        private let byToken = Locked<[String: (accepted: Int, unavailable: Int, other: [Int])]>([:])
        func record(_ token: String, _ status: Int) {
            byToken.withLock { m in
                var e = m[token] ?? (0, 0, [])
                switch status {
                case 201: e.accepted += 1
                case 503: e.unavailable += 1
                default: e.other.append(status)
                }
                m[token] = e
            }
        }
        var all: [String: (accepted: Int, unavailable: Int, other: [Int])] { byToken.withLock { $0 } }
        var accepted: Int { byToken.withLock { $0.values.map(\.accepted).reduce(0, +) } }
        var unavailable: Int { byToken.withLock { $0.values.map(\.unavailable).reduce(0, +) } }
    }

    @Test func aRestartUnderLoadIs503ThenServiceResumesWithNothingLostOrCountedTwice() async throws {
        _ = try await PostgresTestServer.require()
        // A server of its own: this test stops it.
        let postgres = try await onThread { try PostgresServerProcess.start() }
        defer { Thread { postgres.stop() }.start() }
        let database = try await PostgresTestDatabase.create(on: postgres, name: "restart")
        let url = database.url
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushrelay-pgrestart-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let config = dir + "/pushrelay.yaml"
        try """
        http:
          port: 0
        storage:
          backend: postgres
          postgres:
            url: "\(url)"
            pool_size: 4

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let server = try await ServerProcess.start(config: config, logFile: dir + "/serve.log")
        defer { kill(server.pid, SIGKILL) }

        let outcomes = Outcomes()
        let stop = CrashSafetyTests.Flag()
        let port = server.port
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        var n = 0
                        while !stop.isSet {
                            let token = "restart:\(client)-\(n % 5)"
                            let body: JSONValue = [
                                "message": .string("m\(n)"), "push_token": .string(token),
                                "registration_info": [
                                    "app_id": "io.homeassistant.companion.android", "webhook_id": .string("hook-\(client)-\(n % 5)"),
                                ],
                            ]
                            if let r = try? await CrashSafetyTests.post(port: port, "/api/sendPush/android/v1", body) {
                                outcomes.record(token, r.status)
                                if r.status == 503 {
                                    #expect(r.json["message"]?.stringValue?.isEmpty == false, "\(r.json)")
                                }
                            }
                            n += 1
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
            }
        }
        try await eventually("the load is answered 201 before the outage") { outcomes.accepted >= 20 }
        try await onThread { postgres.halt() }
        try await eventually("the load is answered 503 during the outage") { outcomes.unavailable >= 1 }
        let health = try await CrashSafetyTests.post(port: port, "/api/checkRateLimits", ["push_token": "restart:0-0"])
        #expect(health.status == 503, "checkRateLimits cannot read the quota: \(health.json)")
        try await onThread { try postgres.resume() }
        let returned = ContinuousClock.now
        try await eventually("PushRelay serves again without a restart", seconds: 30) {
            (try? await CrashSafetyTests.post(
                port: port,
                "/api/sendPush/android/v1",
                [
                    "message": "probe", "push_token": "restart:probe",
                    "registration_info": ["app_id": "io.homeassistant.companion.android", "webhook_id": "hook-probe"],
                ]
            ))?.status == 201
        }
        // The time to the first 201 after PostgreSQL accepts connections again (the goal, 5 s, is a figure to read
        // in this line, not an assertion: the suite shares two cores).
        print("PostgresRestartTests: served again \(ContinuousClock.now - returned) after PostgreSQL's return")
        let acceptedBeforeRecovery = outcomes.accepted
        try await eventually("the load is answered 201 again after the outage") { outcomes.accepted >= acceptedBeforeRecovery + 20 }
        stop.set()
        await load.value

        let all = outcomes.all
        let accepted = all.values.map(\.accepted).reduce(0, +)
        let unavailable = all.values.map(\.unavailable).reduce(0, +)
        print("PostgresRestartTests: \(accepted) answered 201, \(unavailable) answered 503")
        #expect(accepted > 0 && unavailable > 0, "load before, during and after the outage")
        #expect(all.values.allSatisfy { $0.other.isEmpty }, "only 201 and 503: \(all.values.flatMap(\.other))")
        // Counted once: at least what was answered 201, at most that plus the 503s (a reservation committed just
        // before the connection went may have had its answer fail).
        var stored: [String: Int] = [:]
        for line in try await database.psql("SELECT push_token, successful FROM daily_usage WHERE push_token LIKE 'restart:%'").split(separator: "\n")
        {
            let f = line.split(separator: "|")
            if f.count == 2 { stored[String(f[0])] = Int(f[1]) }
        }
        for (token, o) in all {
            let n = stored[token] ?? 0
            #expect(o.accepted <= n && n <= o.accepted + o.unavailable, "\(token): \(o.accepted) answered 201, \(o.unavailable) 503, \(n) counted")
        }
    }
}
