import AsyncHTTPClient
import Foundation
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

/// Load: a real pushrelay serve under SIGTERM with a live channel, which must stop within its grace period.
@Suite struct CLITests {
    @Test func binaryExists() {
        #expect(FileManager.default.isExecutableFile(atPath: CLI.binary.path), "build with `swift build` first: \(CLI.binary.path)")
    }

    @Test func versionSaysTheReleaseAndTheCommit() async throws {
        let r = try await CLI.run(["--version"])
        #expect(r.status == 0)
        let line = r.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("\(PushRelayVersion.string) (commit "), "\(line)")
        #expect(line.range(of: #"\(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$"#, options: .regularExpression) != nil, "\(line)")
    }

    /// The fakes (`PushRelayTestSupport`) live in `pushrelay-dev`; the shipped binary must not carry them.
    @Test func theShippedBinaryLinksNoTestFakes() async throws {
        let symbols = try await ProcessSpawn.run(["/usr/bin/nm", "--defined-only", CLI.binary.path])
        #expect(symbols.status == 0)
        #expect(symbols.stdout.count > 100_000, "nm listed too little to judge")
        #expect(!symbols.stdout.contains("PushRelayTestSupport"))
        #expect(!symbols.stdout.contains("FakeFCM"))
        let dev = try await CLI.run(["dev"])
        #expect(dev.status != 0)
        let tool = try await ProcessSpawn.run([
            CLI.binary.deletingLastPathComponent().appendingPathComponent("pushrelay-dev").path, "fake-providers", "--help",
        ])
        #expect(tool.status == 0)
        #expect(tool.stdout.contains("--fcm-port"))
    }

    /// `pushrelay-dev provider-load`, the benchmark of the provider clients alone, against `fake-providers`.
    @Test func theProviderLoadToolMeasuresExchangesWithTheFakes() async throws {
        let dev = CLI.binary.deletingLastPathComponent().appendingPathComponent("pushrelay-dev").path
        let dir = TestServer.tempPath() + "-fakes"
        let fakes = try ProcessSpawn.start(
            [dev, "fake-providers", "--out", dir, "--apns-port", "0", "--fcm-port", "0"],
            environment: ProcessSpawn.environment(),
            stderrPath: dir + ".log"
        )
        do {
            try await eventually("the fakes write their options") {
                FileManager.default.fileExists(atPath: dir + "/fcm-options.json")
                    && FileManager.default.fileExists(atPath: dir + "/apns-options.json")
            }
            for type in ["fcm", "apns"] {
                let r = try await ProcessSpawn.run([dev, "provider-load", "--dir", dir, "--type", type, "--requests", "200", "--concurrency", "8"])
                #expect(r.status == 0, "\(r.stderr)")
                #expect(r.stdout.contains("\(type) client alone: 200 exchanges"), "\(r.stdout)")
                #expect(r.stdout.contains("us per exchange"), "\(r.stdout)")
            }
            let wrong = try await ProcessSpawn.run([dev, "provider-load", "--dir", dir, "--type", "webpush"])
            #expect(wrong.status != 0 && wrong.stderr.contains("--type must be fcm or apns"), "\(wrong.stderr)")
        } catch {
            kill(fakes, SIGTERM)
            _ = await ProcessSpawn.waitForExit(fakes)
            throw error
        }
        kill(fakes, SIGTERM)
        _ = await ProcessSpawn.waitForExit(fakes)
    }

    @Test func quotaCommandsWorkOnTheDatabase() async throws {
        let db = TestServer.tempPath()
        let env = ["PUSHRELAY_STORAGE_SQLITE_PATH": db]
        let migrate = try await CLI.run(["migrate"], env: env)
        #expect(migrate.status == 0, "\(migrate.err)")
        #expect(migrate.out.contains("schema version \(PushRelayDatabase.migrations.map(\.version).max() ?? 0)"))

        // Seed today's usage as the server would.
        let database = try PushRelayDatabase(path: db)
        let store = SQLiteQuotaLedger(database: database)
        let today = UTCDay(Date())
        let token = "cli-token:APA91bHun4MxP5egoKMwt2KZFBaFUH1RYqx"
        for _ in 0..<4 { _ = try await store.reserve(pushToken: token, appID: "io.x", day: today, policy: QuotaPolicy(), now: Date()) }
        try database.close()

        let list = try await CLI.run(["quota", "list"], env: env)
        #expect(list.status == 0, "\(list.err)")
        #expect(list.out.contains("SUCCESSFUL") && list.out.contains("cli-to…H1RYqx"))
        #expect(!list.out.contains(token), "tokens are shortened unless --full")
        #expect(try await CLI.run(["quota", "list", "--full"], env: env).out.contains(token))

        let json = try await CLI.run(["quota", "list", "--json", "--full", "--top", "5"], env: env)
        let parsed = try JSONParser.parse(Array(json.out.utf8))
        #expect(parsed.arrayValue?.first?["successful"] == 4)
        #expect(parsed.arrayValue?.first?["target"] == .string(token))

        #expect(try await CLI.run(["quota", "set-limit", token, "2"], env: env).status == 0)
        let show = try await CLI.run(["quota", "show", token], env: env)
        #expect(show.out.contains("limit:     2/day (override)"), "\(show.out)")
        #expect(try await CLI.run(["quota", "clear-limit", token], env: env).out.contains("removed"))
        #expect(try await CLI.run(["quota", "reset", token], env: env).out.contains("reset"))
        let after = try await CLI.run(["quota", "list", "--json"], env: env)
        #expect(try JSONParser.parse(Array(after.out.utf8)) == .array([]))

        let badDay = try await CLI.run(["quota", "list", "--day", "nope"], env: env)
        #expect(badDay.status != 0 && badDay.err.contains("YYYY-MM-DD"))
    }

    @Test func checkConfigReportsTheBadKey() async throws {
        let file = TestServer.tempPath() + ".yaml"
        try "quota:\n  daily_limit: lots\n".write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try await CLI.run(["check-config", "--config", file])
        #expect(bad.status != 0)
        #expect(bad.err.contains("quota.daily_limit"), "\(bad.err)")
        let viaEnv = try await CLI.run(["check-config"], env: ["PUSHRELAY_CONFIG": file])
        #expect(viaEnv.status != 0 && viaEnv.err.contains("quota.daily_limit"))
        let good = try await CLI.run(["check-config"])
        #expect(good.status == 0 && good.out.contains("configuration OK"))
        let serve = try await CLI.run(["serve", "--config", file])
        #expect(serve.status != 0 && serve.err.contains("quota.daily_limit"), "an invalid config stops the server")
    }

    /// Starts `pushrelay serve` on a free port (port 0: the log says which) and returns its pid, port and log.
    static func startServer(_ environment: [String: String] = [:]) async throws -> (pid: pid_t, port: Int, log: @Sendable () -> String) {
        let db = TestServer.tempPath()
        var env = ProcessSpawn.environment(["PUSHRELAY_STORAGE_SQLITE_PATH": db, "PUSHRELAY_HTTP_PORT": "0"].merging(environment) { $1 })
        env["GLIBC_TUNABLES"] = environment["GLIBC_TUNABLES"]  // only the test's own
        let server = try await ServerProcess.start(arguments: ["serve"], environment: env, logFile: db + ".log")
        return (server.pid, server.port, { server.log })
    }

    /// The environment a running process was started (or re-executed) with.
    static func environment(of pid: pid_t) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func serveShutsDownGracefullyOnSIGTERM() async throws {
        let (pid, port, log) = try await Self.startServer()
        let ws = try await ProcessSpawn.stoppingOnThrow(pid) {
            #expect(await probe(port: port))
            // `serve` re-executed itself with glibc's allocator tuned (AllocatorTuning), keeping its process id.
            #expect(Self.environment(of: pid).contains("GLIBC_TUNABLES=glibc.malloc.tcache_count=1024"), "\(Self.environment(of: pid))")
            // A connected push channel does not hold the server open.
            return try await WSTestClient.subscribed(port: port, token: "sigterm-test-token-" + String(repeating: "z", count: 20))
        }
        // A server that ignores SIGTERM is killed after 30 s, and the test fails.
        let status = await ProcessSpawn.stop(pid, SIGTERM, within: .seconds(30))
        #expect(status == 0, "\(log())")
        #expect(log().contains("database closed"), "\(log())")
        #expect(log().contains("nothing leaves this machine"), "the sandbox warning is logged")
        #expect(await ws.waitUntilClosed())
    }

    @Test func anOperatorsAllocatorSettingsAreLeftAlone() async throws {
        for (extra, expected) in [
            (["GLIBC_TUNABLES": "glibc.malloc.tcache_count=7"], "GLIBC_TUNABLES=glibc.malloc.tcache_count=7"),
            (["PUSHRELAY_MALLOC_TUNING": "off"], nil),
        ] {
            let (pid, port, log) = try await Self.startServer(extra)
            #expect(await probe(port: port))
            let tunables = Self.environment(of: pid).filter { $0.hasPrefix("GLIBC_TUNABLES=") }
            #expect(tunables == (expected.map { [$0] } ?? []), "\(extra)")
            #expect(await ProcessSpawn.stop(pid, SIGTERM, within: .seconds(30)) == 0, "\(log())")
        }
    }

    @Test func serveExplainsAPortInUseAndExits() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let r = try await CLI.run(["serve"], env: ["PUSHRELAY_HTTP_PORT": "\(s.port)", "PUSHRELAY_STORAGE_SQLITE_PATH": TestServer.tempPath()])
            #expect(r.status == 1)
            #expect(r.err.contains("cannot listen on 127.0.0.1:\(s.port): the address is already in use"), "\(r.err)")
        }
    }

    /// Whether the server answers `/health` 200 within 10 s (the whole suite starts at once; a busy machine is slow).
    /// Never throws, so that the caller still stops the server it started.
    private func probe(port: Int) async -> Bool {
        let r = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(10))
        return r?.status.code == 200
    }
}
