import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one connection with no credentials can make the real `pushrelay serve` hold: `Benchmarks/stranger.py`'s
/// flooding patterns against one server with 2 s authentication, request and idle timeouts. Each may grow the
/// server's RSS by at most 64 MB and must be closed by the server within 10 s (a run ends at the close, about 4 s
/// in: the timeout, then the server's wait for the peer, a websocket's close frame 2 s or an HTTP answer that cannot be
/// written 1 s, then a reset).
///
/// The patterns: a websocket that never authenticates and sends 125-byte pings without reading; the same, then one
/// empty pong every two thirds of a second; pipelined Home Assistant posts (`{}`) that are never read; pipelined
/// Matrix notifies that are never read.
///
/// Alone: one stranger's floods measured against the server's RSS, which other suites' servers would move.
@Suite(.serialized) struct StrangerBudgetTests {
    static let patterns = [
        (1, "websocket ping flood"), (2, "websocket stalled with pongs"), (3, "pipelined Home Assistant posts"), (4, "pipelined Matrix notifies"),
    ]
    static let seconds = "10"

    @Test func aFloodingStrangerIsClosedByItsTimeoutAndGrowsTheServerByAtMost64MB() async throws {
        let dir = TempPath.directory(prefix: "pushrelay-stranger")
        let config = dir + "/pushrelay.yaml"
        try """
        http:
          port: 0
          request_timeout: 2s
          idle_timeout: 2s
          drain_period: 0
        storage:
          sqlite_path: \(dir)/pushrelay.sqlite
        delivery:
          deadline_ms: 1500
        channel:
          auth_timeout_ms: 2000
        matrix:
          apps:
            im.stranger.android:
              provider: sandbox
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let server = try await ServerProcess.start(config: config, logFile: dir + "/server.log")
        defer {
            kill(server.pid, SIGKILL)
            _ = waitpid(server.pid, nil, 0)
        }
        let script = RepositoryRoot.url.appendingPathComponent("Benchmarks/stranger.py").path
        for (pattern, name) in Self.patterns {
            let run = try await ProcessSpawn.run([
                "python3", script, "run", "--pattern", "\(pattern)", "--port", "\(server.port)", "--pid", "\(server.pid)",
                "--db", dir + "/pushrelay.sqlite", "--seconds", Self.seconds, "--auth-timeout-ms", "2000", "--request-timeout-ms", "2000",
                "--settle", "0.5",
            ])
            let line = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
            let result = try #require(try? JSONParser.parse(Array(line.utf8)), "\(name): stranger.py said \(run.stdout) \(run.stderr)")
            let before = result["rss_before_mb"]?.doubleValue ?? 0
            let peak = result["rss_peak_mb"]?.doubleValue ?? .infinity
            let closedAt = result["server_closed_at_s"]?.doubleValue
            print("StrangerBudgetTests: \(name): RSS \(before) → \(peak) MB, closed by the server at \(closedAt.map { "\($0) s" } ?? "—")")
            #expect(peak - before <= 64, "\(name): RSS \(before) → \(peak) MB: \(line)")
            #expect(
                closedAt != nil,
                "\(name): the server did not close the connection within \(Self.seconds) s: \(line)"
            )
            #expect(kill(server.pid, 0) == 0, "\(name): the server is gone: \(server.log.suffix(2000))")
        }
    }
}
