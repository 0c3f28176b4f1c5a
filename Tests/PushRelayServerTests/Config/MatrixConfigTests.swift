import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestSupport
import PushRelayWebPush
import Testing

@Suite struct MatrixConfigTests {
    func load(_ yaml: String) throws -> PushRelayConfig {
        let file = TestServer.tempPath() + ".yaml"
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        return try PushRelayConfig.load(file: file, environment: [:])
    }

    func problem(_ yaml: String) -> String {
        do {
            _ = try load(yaml)
            return "accepted"
        } catch let e as ConfigError {
            return e.key + ": " + e.problem
        } catch {
            return "\(error)"
        }
    }

    static let vapidPEM = VAPIDKey.generate().pem

    static func base(_ matrix: String) -> String {
        """
        providers:
          sandbox: {type: sandbox}
          web:
            type: webpush
            vapid_contact_email: ops@example.org
            vapid_private_key: |
        \(vapidPEM.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n"))
        apps:
          - {match: "*", provider: sandbox}
        \(matrix)
        """
    }

    @Test func readsMatrixAppsAndSettings() async throws {
        let c = try load(
            Self.base(
                """
                matrix:
                  dedup_window: 30m
                  retry: {base_delay: 5s, max_delay: 10m, max_attempts: 3, poll_interval: 500ms}
                  apps:
                    im.example.android: {provider: sandbox, daily_limit: 100, fcm_options: {android: {ttl: 60s}}, send_badge_counts: false}
                    "im.example.ios*": {provider: sandbox, platform: apns, push_type: alert, convert_device_token_to_hex: false}
                    im.example.web: {provider: web}
                """
            )
        )
        #expect(c.matrix.dedupWindowMs == 1_800_000)
        #expect(c.matrix.retry.baseDelayMs == 5000)
        #expect(c.matrix.retry.maxDelayMs == 600_000)
        #expect(c.matrix.retry.maxAttempts == 3)
        #expect(c.matrix.retry.pollIntervalMs == 500)
        #expect(c.matrix.apps["im.example.android"]?.dailyLimit == 100)
        #expect(
            c.matrix.apps["im.example.android"]?.format == .fcm(MatrixFCMOptions(fcmOptions: ["android": ["ttl": "60s"]], sendBadgeCounts: false))
        )
        #expect(c.matrix.apps["im.example.ios*"]?.format == .apns(MatrixAPNsOptions(pushType: "alert", convertDeviceTokenToHex: false)))
        #expect(c.matrix.apps["im.example.web"]?.format == .webPush)
        #expect(c.providers["web"]?.type == "webpush")
    }

    @Test func errorsNameTheKey() {
        #expect(problem(Self.base("matrix: {appz: {}}")).hasPrefix("matrix.appz: unknown key"))
        #expect(problem(Self.base("matrix: {apps: {a: {provider: nope}}}")).hasPrefix("matrix.apps.a.provider: names 'nope'"))
        #expect(problem(Self.base("matrix: {apps: {a: {}}}")).hasPrefix("matrix.apps.a.provider: is required"))
        #expect(
            problem(Self.base("matrix: {apps: {a: {provider: web, platform: fcm}}}")).hasPrefix(
                "matrix.apps.a.platform: is 'fcm' but provider 'web' is of type webpush"
            )
        )
        #expect(
            problem(Self.base("matrix: {apps: {a: {provider: web, push_type: alert}}}")).hasPrefix(
                "matrix.apps.a.push_type: only applies to apns apps"
            )
        )
        #expect(
            problem(Self.base("matrix: {apps: {a: {provider: sandbox, fcm_options: {data: {}}}}}")).hasPrefix(
                "matrix.apps.a.fcm_options.data: is set by PushRelay"
            )
        )
        #expect(
            problem(Self.base("matrix: {apps: {a: {provider: sandbox, daily_limit: -1}}}")).hasPrefix(
                "matrix.apps.a.daily_limit: must be a whole number"
            )
        )
        #expect(
            problem(Self.base("matrix: {apps: {a: {provider: sandbox, platform: apns, push_type: pushy}}}")).hasPrefix(
                "matrix.apps.a.push_type: must be one of"
            )
        )
        #expect(problem(Self.base("matrix: {dedup_window: soon}")).hasPrefix("matrix.dedup_window: must be a duration"))
        #expect(problem(Self.base("matrix: {retry: {max_attempts: 0}}")).hasPrefix("matrix.retry.max_attempts: must be a whole number"))
    }

    @Test func webPushProviderOptionsAreChecked() {
        func provider(_ body: String) -> String {
            problem("providers:\n  web:\n    type: webpush\n\(body)\napps: [{match: '*', provider: web}]")
        }
        #expect(provider("    vapid_contact_email: a@b.org").hasPrefix("providers.web.vapid_private_key: is required"))
        #expect(
            provider("    vapid_private_key: /nonexistent.pem\n    vapid_contact_email: a@b.org").hasPrefix(
                "providers.web.vapid_private_key: cannot read"
            )
        )
        #expect(
            provider("    vapid_private_key: \"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\"\n    vapid_contact_email: a@b.org")
                .hasPrefix("providers.web.vapid_private_key: is not a P-256 private key")
        )
        let pem = Self.vapidPEM.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
        #expect(provider("    vapid_private_key: |\n\(pem)").hasPrefix("providers.web.vapid_contact_email: is required"))
        #expect(
            provider("    vapid_private_key: |\n\(pem)\n    vapid_contact_email: nobody").hasPrefix(
                "providers.web.vapid_contact_email: 'nobody' is not an e-mail address"
            )
        )
        #expect(
            provider("    vapid_private_key: |\n\(pem)\n    vapid_contact_email: a@b.org\n    allowed_endpoints: []").hasPrefix(
                "providers.web.allowed_endpoints: must list"
            )
        )
        #expect(
            provider("    vapid_private_key: |\n\(pem)\n    vapid_contact_email: a@b.org\n    ttl: -5").hasPrefix(
                "providers.web.ttl: must be a whole number"
            )
        )
        #expect(
            provider("    vapid_private_key: |\n\(pem)\n    vapid_contact_email: a@b.org\n    colour: blue").hasPrefix(
                "providers.web.colour: unknown key for a webpush provider"
            )
        )
        #expect(provider("    vapid_private_key: |\n\(pem)\n    vapid_contact_email: mailto:a@b.org") == "accepted")
    }

    @Test func sygnalConfigConvertsToAWorkingPushRelayConfig() async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let env = try await FakeProviderEnvironment.start(directory: dir)
        await env.shutdown()
        let vapid = dir + "/vapid.pem"
        try Self.vapidPEM.write(toFile: vapid, atomically: true, encoding: .utf8)
        let sygnal = """
            http: {port: 5000}
            apps:
              im.vector.app.ios:
                type: apns
                keyfile: \(env.apnsKeyFile)
                key_id: \(env.apnsKey.keyID)
                team_id: \(env.apnsKey.teamID)
                topic: im.vector.app
                platform: sandbox
                push_type: alert
                inflight_request_limit: 100
              im.vector.app.android:
                type: gcm
                api_version: v1
                service_account_file: \(env.serviceAccountFile)
                fcm_options: {apns: {payload: {aps: {content-available: 1}}}}
              "im.vector.web.*":
                type: webpush
                vapid_private_key: \(vapid)
                vapid_contact_email: ops@example.org
                allowed_endpoints: [fcm.googleapis.com]
                ttl: 600
                mystery: 1
              custom: {type: mymodule.MyPushkin}
            """
        let file = dir + "/sygnal.yaml"
        try sygnal.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["import-sygnal-config", file])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("# NOTE: apps.custom: type 'mymodule.MyPushkin'"))
        #expect(r.out.contains("# mystery: not understood by PushRelay; dropped"))
        #expect(r.out.contains("# inflight_request_limit:"))
        let out = dir + "/pushrelay.yaml"
        try r.out.write(toFile: out, atomically: true, encoding: .utf8)
        let c = try PushRelayConfig.load(file: out, environment: [:])
        #expect(c.providers["im_vector_app_ios"]?.type == "apns")
        #expect(c.providers["im_vector_app_ios"]?.options["environment"] == "sandbox")
        #expect(c.providers["im_vector_app_android"]?.type == "fcm")
        #expect(c.providers["im_vector_web__"]?.options["ttl"] == 600)
        #expect(c.matrix.apps["im.vector.app.ios"]?.format == .apns(MatrixAPNsOptions(pushType: "alert")))
        #expect(
            c.matrix.apps["im.vector.app.android"]?.format
                == .fcm(MatrixFCMOptions(fcmOptions: ["apns": ["payload": ["aps": ["content-available": 1]]]]))
        )
        #expect(c.matrix.apps["im.vector.web.*"]?.format == .webPush)
        #expect(try await CLI.run(["import-sygnal-config", dir + "/missing.yaml"]).status != 0)
    }

    @Test func generateVAPIDKeyWritesAUsablePEM() async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let out = dir + "/vapid.pem"
        let r = try await CLI.run(["webpush", "generate-vapid-key", "--out", out])
        #expect(r.status == 0, "\(r.err)")
        let pem = try String(contentsOfFile: out, encoding: .utf8)
        let key = try #require(VAPIDKey.parse(pem))
        #expect(r.out.contains("applicationServerKey: \(Base64URL.encode(key.publicKey.x963Representation))"))
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // It refuses to overwrite without --force.
        #expect(try await CLI.run(["webpush", "generate-vapid-key", "--out", out]).status != 0)
        #expect(try await CLI.run(["webpush", "generate-vapid-key", "--out", out, "--force"]).status == 0)
    }
}
