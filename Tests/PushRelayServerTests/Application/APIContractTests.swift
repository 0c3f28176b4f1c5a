import AsyncHTTPClient
import Foundation
import NIOCore
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The API contract (`docs/openapi.yaml`) is valid and true.
///
/// Valid: `openapi-spec-validator` accepts it. True: Schemathesis generates requests for every operation from it and
/// sends them to the real `pushrelay serve` (every feature on: admin, metrics, Matrix, the WebPush relay and calls
/// through the fake FCM and APNs), and its standard checks hold for every answer: no server error, a documented
/// status, the documented content type, a body that matches the schema, the documented headers. Bounded (a fixed
/// seed, `PUSHRELAY_SCHEMATHESIS_EXAMPLES` examples an operation, default 12) so it takes about a minute.
///
/// Needs python3 with `openapi-spec-validator` and `schemathesis` (scripts/install-deps --test); skipped without them,
/// except under CI=true, where it runs (and fails).
///
/// Alone: Schemathesis fuzzes every operation of the API contract against a live server for about a minute.
@Suite struct APIContractTests {
    static let spec = RepositoryRoot.url.appendingPathComponent("docs/openapi.yaml").path
    static let adminToken = "contract-admin-token-0123456789"

    static var missing: String? {
        guard (try? ProcessSpawn.runBlocking(["python3", "-c", "import openapi_spec_validator, schemathesis"]).status) == 0 else {
            return "python3 with openapi-spec-validator and schemathesis"
        }
        return nil
    }

    static var canRun: Bool {
        guard let missing else { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        print("APIContractTests skipped: \(missing) is missing (scripts/install-deps --test installs them)")
        return false
    }

    @Test(.enabled(if: canRun)) func theDocumentIsValidOpenAPI() async throws {
        let r = try await ProcessSpawn.run(["python3", "-m", "openapi_spec_validator", Self.spec])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }

    @Test(.enabled(if: canRun)) func theRunningServerAnswersAsTheDocumentSays() async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let env = try await FakeProviderEnvironment.start(directory: dir)
        defer { Task { await env.shutdown() } }
        let config = dir + "/pushrelay.yaml"
        // Quotas and the failed-credential budget high enough that generated traffic does not run into them (a 429 is
        // documented, but then every later case of that token would be one).
        try """
        http:
          port: 0
          max_connections_per_address: 0
        storage:
          sqlite_path: \(dir)/pushrelay.sqlite
        quota:
          daily_limit: 10000000
        security:
          max_failed_auths_per_minute: 100000
        admin:
          token: \(Self.adminToken)
        metrics:
          enabled: true
        log:
          level: info
        providers:
          sandbox:
            type: sandbox
          fcm:
            type: fcm
        \(env.fcmYAML)
          apns:
            type: apns
        \(env.apnsYAML)
        apps:
          - match: "*"
            provider: sandbox
        matrix:
          apps:
            "*":
              provider: sandbox
            im.example.android:
              provider: fcm
            im.example.ios:
              provider: apns
        relay:
          apns_provider: apns
          fcm_provider: fcm
        voip:
          apns_provider: apns
          fcm_provider: fcm
        """.write(toFile: config, atomically: true, encoding: .utf8)
        // Only serve and migrate make the database; the key is made before the server starts.
        #expect(try await CLI.run(["migrate", "--config", config]).status == 0)
        let created = try await CLI.run(["api-key", "create", "--config", config, "--label", "contract"])
        #expect(created.status == 0, "\(created.err)")
        let apiKey = try #require(created.out.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) })
        try """
        [auth.openapi.adminToken]
        bearer = "\(Self.adminToken)"

        [auth.openapi.apiKey]
        bearer = "\(apiKey)"
        """.write(toFile: dir + "/schemathesis.toml", atomically: true, encoding: .utf8)

        let server = try await ServerProcess.start(config: config, logFile: dir + "/serve.log")
        let examples = ProcessInfo.processInfo.environment["PUSHRELAY_SCHEMATHESIS_EXAMPLES"] ?? "12"
        let run = try await ProcessSpawn.run(
            [
                // Run in the test's folder: Schemathesis and Hypothesis keep their caches in the working directory.
                "python3", "-c",
                "import os, sys; os.chdir(sys.argv.pop(1)); sys.argv[0] = 'schemathesis'; from schemathesis.cli import schemathesis; schemathesis()",
                dir,
                "--config-file", dir + "/schemathesis.toml", "--no-color",
                "run", Self.spec, "--url", "http://127.0.0.1:\(server.port)",
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance",
                "--max-examples", examples, "--seed", "20261125", "--request-timeout", "15",
            ],
            environment: ProcessSpawn.environment(["HOME": dir])
        )
        let stopped = await server.stop(SIGTERM)
        let summary = run.stdout.split(separator: "\n").suffix(40).joined(separator: "\n")
        #expect(run.status == 0, "schemathesis found answers the document does not describe:\n\(summary)\n\(run.stderr.suffix(2000))")
        #expect(run.stdout.contains("passed"), "\(summary)")
        #expect(stopped == 0, "the server survived the run and stopped cleanly: \(server.log.suffix(2000))")
        print(
            "APIContractTests: \(summary.split(separator: "\n").filter { $0.contains("passed") || $0.contains("failed") }.joined(separator: " | "))"
        )
    }
}
