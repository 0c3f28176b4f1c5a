import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// The delivery deadline covers everything a delivery waits on, the provider's OAuth token included, and a stuck
/// token fetch is shared, not started again by every request.
@Suite struct ProviderDeadlineTests {
    @Test func aHangingOAuthEndpointIsAnsweredAtTheDeadlineAndFetchedOnce() async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        // The server, its provider and the fakes on one clock the test moves: the deadline passes when the test says,
        // while the token fetch (whose own timeout is far longer) is still hanging.
        let clock = ManualClock("2026-11-21T12:00:00Z")
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
                let answers = Task {
                    try await withThrowingTaskGroup(of: HTTPReply.self) { group in
                        for i in 0..<5 { group.addTask { try await s.android(TestServer.haBody(token: "oauth-hang:\(i)")) } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                // Every delivery waits for the token within its attempt's 1.5 s, behind one shared fetch.
                try await eventually("five deliveries wait for the one token fetch") {
                    env.fcm.tokenRequests == 1 && clock.pendingDelays.filter { $0 == .milliseconds(1500) }.count == 5
                }
                clock.advance(by: .milliseconds(1500))
                for r in try await answers.value {
                    expectJSONError(r, status: 503, errorType: "ProviderUnavailable")
                    #expect(r.headers["retry-after"] != nil)
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
