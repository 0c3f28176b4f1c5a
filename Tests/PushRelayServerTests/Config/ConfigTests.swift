import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@Suite struct ConfigTests {
    func load(_ yaml: String, env: [String: String] = [:]) throws -> PushRelayConfig {
        let file = TestServer.tempPath() + ".yaml"
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        return try PushRelayConfig.load(file: file, environment: env)
    }

    func problem(_ yaml: String, env: [String: String] = [:]) -> ConfigError? {
        do {
            _ = try load(yaml, env: env)
            return nil
        } catch let e as ConfigError { return e } catch { return nil }
    }

    @Test func embeddedDefaults() throws {
        let c = try PushRelayConfig.load(file: nil, environment: [:])
        #expect(c.http.host == "127.0.0.1" && c.http.port == 8080 && c.http.maxBodyBytes == 262_144)
        #expect(c.storage.sqlitePath == "./pushrelay.sqlite")
        #expect(c.quota.dailyLimit == 500 && c.quota.exemptCommands && c.quota.exemptCritical && c.quota.retentionDays == 30)
        #expect(c.apps == [.init(match: "*", provider: "sandbox")])
        #expect(c.providers["sandbox"]?.type == "sandbox")
        #expect(c.adminToken == nil && c.usingDefaultApps)
    }

    @Test func exampleConfigIsValidAndEqualsTheDefaults() throws {
        let root = RepositoryRoot.url
        let c = try PushRelayConfig.load(file: root.appendingPathComponent("config/pushrelay.example.yaml").path, environment: [:])
        let d = try PushRelayConfig.load(file: nil, environment: [:])
        #expect(c.http.port == d.http.port && c.http.host == d.http.host && c.http.maxBodyBytes == d.http.maxBodyBytes)
        #expect(c.quota.dailyLimit == d.quota.dailyLimit && c.quota.retentionDays == d.quota.retentionDays)
        #expect(c.storage.sqlitePath == d.storage.sqlitePath && c.apps == d.apps && c.adminToken == nil)
        #expect(c.iosCompanionAppIDs == d.iosCompanionAppIDs)
        #expect(c.maxFailedAuthsPerMinute == d.maxFailedAuthsPerMinute)
        #expect(c.delivery.deadlineMs == d.delivery.deadlineMs && c.delivery.deadTokenTTLms == d.delivery.deadTokenTTLms)
        #expect(
            c.delivery.maxInFlight == d.delivery.maxInFlight && c.delivery.maxWaitMs == d.delivery.maxWaitMs
                && c.delivery.retryBaseMs == d.delivery.retryBaseMs
                && c.delivery.maxAttempts == d.delivery.maxAttempts
        )
    }

    @Test func environmentOverridesTheFile() throws {
        let c = try load(
            "http:\n  port: 9000\nquota:\n  daily_limit: 10\n",
            env: [
                "PUSHRELAY_HTTP_PORT": "9100", "PUSHRELAY_QUOTA_EXEMPT_CRITICAL": "false", "PUSHRELAY_ADMIN_TOKEN": "0123456789abcdef",
                "PUSHRELAY_QUOTA_APP_LIMITS": #"{"io.x.*": 7}"#, "PUSHRELAY_STORAGE_SQLITE_PATH": "/tmp/x.sqlite",
            ]
        )
        #expect(c.http.port == 9100 && c.quota.dailyLimit == 10 && !c.quota.exemptCritical)
        #expect(c.adminToken == "0123456789abcdef" && c.storage.sqlitePath == "/tmp/x.sqlite")
        #expect(c.quotaPolicy.maximum(appID: "io.x.y", override: nil) == 7)
        #expect(PushRelayConfig.environmentVariable(for: "http.max_body_bytes") == "PUSHRELAY_HTTP_MAX_BODY_BYTES")
    }

    @Test func invalidConfigNamesTheKey() {
        #expect(problem("http:\n  port: abc\n")?.key == "http.port")
        #expect(problem("http:\n  port: 70000\n")?.key == "http.port")
        #expect(problem("htp:\n  port: 1\n")?.key == "htp")
        #expect(problem("quota:\n  daily_limt: 1\n")?.key == "quota.daily_limt")
        #expect(problem("quota:\n  daily_limit: -5\n")?.key == "quota.daily_limit")
        #expect(problem("quota:\n  exempt_commands: maybe\n")?.key == "quota.exempt_commands")
        #expect(problem("quota:\n  app_limits:\n    io.x: lots\n")?.key == "quota.app_limits.io.x")
        #expect(problem("admin:\n  token: short\n")?.key == "admin.token")
        #expect(problem("log:\n  level: loud\n")?.key == "log.level")
        #expect(problem("apps:\n  - match: '*'\n    provider: nowhere\n")?.key == "apps[0].provider")
        #expect(problem("providers:\n  p:\n    type: carrier-pigeon\n")?.key == "providers.p.type")
        #expect(problem("providers:\n  p:\n    kind: sandbox\n")?.key == "providers.p.type")
        #expect(problem("providers:\n  a: {type: sandbox}\n  b: {type: sandbox}\n")?.key == "apps")
        #expect(problem("", env: ["PUSHRELAY_HTTP_PORT": "x"])?.key == "http.port")
        #expect(problem("http: [1, 2]\n")?.key == "http")
        #expect(problem("delivery:\n  max_wait_ms: 8000\n")?.key == "delivery.max_wait_ms", "not shorter than the deadline")
        #expect(problem("delivery:\n  deadline_ms: 2000\n  max_wait_ms: 3000\n")?.key == "delivery.max_wait_ms")
        #expect(problem("delivery:\n  max_wait_ms: -1\n")?.key == "delivery.max_wait_ms")
        #expect(problem("{{{not yaml")?.description.contains("not valid YAML") == true)
        for e in [problem("http:\n  port: abc\n"), problem("htp: 1\n")] {
            #expect(e?.description.contains("invalid configuration") == true)
        }
    }
}
