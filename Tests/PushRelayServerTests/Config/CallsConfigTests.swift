import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// `calls.*`, and `voip.*`, its older name: still read key by key, each one noted as deprecated and logged at start.
@Suite struct CallsConfigTests {
    /// Providers of the types calls need (credentials from the fakes, which are not kept running): `ios` and `other`
    /// (apns), `android` (fcm).
    static func providers() async throws -> String {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let env = try await FakeProviderEnvironment.start(directory: dir)
        await env.shutdown()
        return """
            providers:
              ios:
                type: apns
            \(env.apnsYAML)
              other:
                type: apns
            \(env.apnsYAML)
              android:
                type: fcm
            \(env.fcmYAML)
            apps:
              - {match: "*", provider: android}
            """
    }

    func load(_ yaml: String) async throws -> PushRelayConfig {
        let file = TestServer.tempPath() + ".yaml"
        try (try await Self.providers() + "\n" + yaml).write(toFile: file, atomically: true, encoding: .utf8)
        return try PushRelayConfig.load(file: file, environment: [:])
    }

    @Test func callsIsReadWithoutDeprecations() async throws {
        let c = try await load("calls: {apns_provider: ios, fcm_provider: android, channel_confirm_timeout_ms: 1500}")
        #expect(c.calls.apnsProvider == "ios" && c.calls.fcmProvider == "android" && c.calls.channelConfirmTimeoutMs == 1500)
        #expect(c.deprecations.isEmpty)
    }

    @Test func voipIsStillReadAndEachKeyIsNotedAsDeprecated() async throws {
        let c = try await load("voip: {apns_provider: ios, channel_confirm_timeout_ms: 2500}")
        #expect(c.calls.apnsProvider == "ios" && c.calls.fcmProvider == nil && c.calls.channelConfirmTimeoutMs == 2500)
        #expect(
            c.deprecations == [
                Deprecation(key: "voip.apns_provider", replacement: "calls.apns_provider"),
                Deprecation(key: "voip.channel_confirm_timeout_ms", replacement: "calls.channel_confirm_timeout_ms"),
            ]
        )
    }

    @Test func callsWinsOverVoipKeyByKey() async throws {
        let c = try await load("calls: {apns_provider: ios}\nvoip: {apns_provider: other, fcm_provider: android}")
        #expect(c.calls.apnsProvider == "ios", "the new name wins")
        #expect(c.calls.fcmProvider == "android", "a key only the old section sets is still read")
        #expect(c.deprecations == [Deprecation(key: "voip.fcm_provider", replacement: "calls.fcm_provider")])
    }

    @Test func anOldKeyIsCheckedAsTheNewOneAndNamedInTheError() async throws {
        do {
            _ = try await load("voip: {apns_provider: android}")
            Issue.record("an fcm provider was accepted as the iOS call provider")
        } catch let e as ConfigError {
            #expect(e.key == "voip.apns_provider", "the error names the key as written")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func theServerLogsEachDeprecatedKeyAtStart() async throws {
        try await TestServer.with(yaml: try await Self.providers() + "\nvoip: {fcm_provider: android}\n") { (s: TestServer) async throws in
            let lines = s.logs.lines.filter { $0.text.contains("deprecated config key") }
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.level == .warning)
            #expect(lines.first?.text.contains("voip.fcm_provider") == true && lines.first?.text.contains("calls.fcm_provider") == true)
        }
    }
}
