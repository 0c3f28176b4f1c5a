import AsyncHTTPClient
import Foundation
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A routine restart raises no `PushRelayStorageNotReady` (`deploy/prometheus/alerts.yml`): the real `pushrelay serve`
/// is restarted on the socket the test holds (as systemd does) while a prober asks `/ready` and scrapes `/metrics`
/// every 100 ms. The drain's 503 `ShuttingDown` is seen, the scraped `pushrelay_storage_writable` is 1 throughout, and
/// `promtool` evaluates the real rule over the scraped series, spread 15 s apart, without an alert. The same series
/// with one scrape at 0 (a real fault) fires it, so the evaluation can see an alert when there is one.
@Suite(.serialized) struct RestartAlertTests {
    /// What one round of the prober saw: `/ready`'s status and the scrape's values (nil while nothing answered).
    struct Round {
        var ready: Int?
        var writable: Double?
        var ready503: Double?
    }

    @Test func aRestartUnderAReadyProbeAndScrapesRaisesNoStorageNotReady() async throws {
        let dir = TempPath.directory(prefix: "pushrelay-restart-alert")
        let config = dir + "/pushrelay.yaml"
        try """
        http:
          host: 127.0.0.1
          port: 1
          drain_period: 1s
        storage:
          sqlite_path: \(dir)/pushrelay.sqlite
        metrics:
          enabled: true
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let launcher = try SocketLauncher()
        let first = try await launcher.start(config: config, logFile: dir + "/first.log")
        let port = launcher.port
        let prober = Task { () -> [Round] in
            var rounds: [Round] = []
            while !Task.isCancelled {
                rounds.append(await Self.probe(port: port))
                try? await Task.sleep(for: .milliseconds(100))
            }
            return rounds
        }
        var second: pid_t?
        do {
            try await Task.sleep(for: .seconds(1))
            #expect(await ProcessSpawn.stop(first, SIGTERM, within: .seconds(30)) == 0)
            second = try await launcher.start(config: config, logFile: dir + "/second.log")
            try await Task.sleep(for: .seconds(1))
        } catch {
            prober.cancel()
            if let second { _ = await ProcessSpawn.stop(second, SIGKILL) }
            throw error
        }
        prober.cancel()
        let rounds = await prober.value
        if let second {
            #expect(await ProcessSpawn.stop(second, SIGTERM, within: .seconds(30)) == 0)
        }

        #expect(rounds.contains { $0.ready == 503 }, "the drain was not seen: \(rounds)")
        #expect(rounds.contains { $0.ready == 200 }, "\(rounds)")
        let scraped = rounds.compactMap(\.writable)
        #expect(scraped.count > 10, "\(rounds)")
        #expect(scraped.allSatisfy { $0 == 1 }, "the storage was reported unwritable during a restart: \(rounds)")

        let alerts = RepositoryRoot.url.appendingPathComponent("deploy/prometheus/alerts.yml").path
        let quiet = try await Self.promtool(rounds, rules: alerts, name: "restart", in: dir)
        #expect(quiet.status == 0, "\(quiet.stdout)\(quiet.stderr)")
        // The evaluation is not blind: the same series with one scrape at 0, as during a full disk, fires the rule
        // (promtool then fails the test file, which expects no alert, naming the alert it got).
        var faulty = rounds
        if let i = faulty.lastIndex(where: { $0.writable != nil }) { faulty[i].writable = 0 }
        let firing = try await Self.promtool(faulty, rules: alerts, name: "fault", in: dir)
        #expect(firing.status != 0, "\(firing.stdout)\(firing.stderr)")
        #expect((firing.stdout + firing.stderr).contains("severity=\"critical\""), "\(firing.stdout)\(firing.stderr)")
    }

    /// One round: `GET /ready`, then `GET /metrics`, each within 2 s.
    static func probe(port: Int) async -> Round {
        var round = Round()
        round.ready = try? await Int(
            HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/ready"), timeout: .seconds(2)).status.code
        )
        guard let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(2)),
            response.status == .ok, let body = try? await response.body.collect(upTo: 4 << 20)
        else { return round }
        let text = String(buffer: body)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let value = line.split(separator: " ").last.flatMap { Double($0) }
            if line.hasPrefix("pushrelay_storage_writable ") {
                round.writable = value
            } else if line.hasPrefix("pushrelay_http_requests_total{"), line.contains("route=\"/ready\""), line.contains("status=\"503\"") {
                round.ready503 = value
            }
        }
        return round
    }

    /// Runs `promtool test rules` on the rounds as series scraped every 15 s (a missing scrape is a gap), expecting no
    /// `PushRelayStorageNotReady` at any of them.
    static func promtool(_ rounds: [Round], rules: String, name: String, in dir: String) async throws -> ProcessSpawn.Output {
        func values(_ v: [Double?]) -> String { v.map { $0.map { String(Int($0)) } ?? "_" }.joined(separator: " ") }
        let labels = "job=\"pushrelay\", instance=\"relay-a:8080\""
        var evaluations = ""
        for i in rounds.indices {
            evaluations += """
                      - eval_time: \(i * 15)s
                        alertname: PushRelayStorageNotReady
                        exp_alerts: []

                """
        }
        let test = """
            rule_files:
              - \(rules)
            evaluation_interval: 15s
            tests:
              - interval: 15s
                input_series:
                  - series: 'pushrelay_storage_writable{\(labels)}'
                    values: '\(values(rounds.map(\.writable)))'
                  - series: 'pushrelay_http_requests_total{\(labels), route="/ready", method="GET", status="503"}'
                    values: '\(values(rounds.map(\.ready503)))'
                alert_rule_test:
            \(evaluations)
            """
        let path = dir + "/\(name)_test.yml"
        try test.write(toFile: path, atomically: true, encoding: .utf8)
        return try await ProcessSpawn.run(["promtool", "test", "rules", path])
    }
}
