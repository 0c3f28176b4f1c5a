import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayTestSupport

/// Runs a PushRelay configured with `fcm` and `apns` providers against freshly started fakes (real TLS, HTTP/2 for
/// APNs), on one clock shared by PushRelay and the fakes. `configure` sees the configuration, `configureWithFakes`
/// also the fakes (their ports, to put a proxy in between).
package func withProviderFakes(
    apps: [AppProviders.Entry] = [.init(match: "io.robbie.HomeAssistant*", provider: "apns"), .init(match: "*", provider: "fcm")],
    clock: ManualClock = ManualClock("2026-11-21T12:00:00Z", timers: .real),
    configure: @escaping (inout PushRelayConfig) -> Void = { _ in },
    configureWithFakes: @escaping (inout PushRelayConfig, FakeProviderEnvironment) -> Void = { _, _ in },
    _ body: @Sendable (TestServer, FakeProviderEnvironment) async throws -> Void
) async throws {
    let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
    let env = try await FakeProviderEnvironment.start(directory: dir, clock: clock)
    do {
        try await TestServer.with(
            clock: clock,
            configure: { c in
                c.providers = [
                    "fcm": .init(name: "fcm", type: "fcm", options: env.fcmOptions),
                    "apns": .init(name: "apns", type: "apns", options: env.apnsOptions),
                ]
                c.apps = apps
                c.delivery.retryBaseMs = 5
                configure(&c)
                configureWithFakes(&c, env)
            }
        ) { (s: TestServer) async throws in
            try await body(s, env)
        }
    } catch {
        await env.shutdown()
        throw error
    }
    await env.shutdown()
}
