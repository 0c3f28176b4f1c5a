import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayTestSupport
import Testing

/// The delivery deadline covers everything a delivery waits on, the provider's OAuth token included, and a stuck
/// token fetch is shared, not started again by every request.
@Suite struct ProviderDeadlineTests {
    @Test func aHangingOAuthEndpointIsAnsweredAtTheDeadlineAndFetchedOnce() async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let clock = ManualClock("2026-11-21T12:00:00Z", timers: .real)
        let env = try await FakeProviderEnvironment.start(directory: dir, clock: clock)
        // The token endpoint takes every connection and answers nothing for 12 s.
        env.fcm.failTokenRequests([.hang(milliseconds: 12_000)])
        do {
            try await TestServer.with(
                clock: clock,
                configure: { c in
                    c.providers = ["fcm": .init(name: "fcm", type: "fcm", options: env.fcmOptions)]
                    c.apps = [.init(match: "*", provider: "fcm")]
                    c.delivery.deadlineMs = 1500
                }
            ) { (s: TestServer) async throws in
                let started = ContinuousClock.now
                let answers = try await withThrowingTaskGroup(of: (HTTPReply, Duration).self) { group in
                    for i in 0..<5 {
                        group.addTask {
                            let r = try await s.android(TestServer.haBody(token: "oauth-hang:\(i)"))
                            return (r, ContinuousClock.now - started)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                for (r, took) in answers {
                    expectJSONError(r, status: 503, errorType: "ProviderUnavailable")
                    #expect(r.headers["retry-after"] != nil)
                    #expect(took < .seconds(6), "answered at the 1.5 s deadline, not when the token fetch gave up (\(took))")
                }
                #expect(env.fcm.tokenRequests == 1, "one shared token fetch while it hangs")
                #expect(env.fcm.records.isEmpty, "nothing was sent without a token")
            }
        } catch {
            await env.shutdown()
            throw error
        }
        await env.shutdown()
    }
}
