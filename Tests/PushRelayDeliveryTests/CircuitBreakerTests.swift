import Foundation
import PushRelayCore
import PushRelayServerTestRig
import Testing

@testable import PushRelayServer

/// A provider failing most deliveries trips its circuit breaker: refused at once with a message and `Retry-After`,
/// the provider not called and nothing counted, visible in `/metrics`; probed after the cool-down.
///
/// ThreadSanitizer: a breaker's counts, shared by concurrent deliveries and its probe.
@Suite struct CircuitBreakerTests {
    @Test func aFailingProviderIsNotCalledDuringTheCoolDownAndIsProbedAfter() async throws {
        let down = DeliveryFailure.transient(reason: "UNAVAILABLE", message: "FCM is unavailable (HTTP 503)", retryAfterSeconds: nil)
        let flaky = ScriptedProvider(name: "fcm", [.fail(down), .fail(down), .fail(down), .fail(down), .deliver])
        try await TestServer.with(
            providers: ["fcm": flaky],
            configure: { c in
                c.apps = [.init(match: "*", provider: "fcm")]
                c.delivery.maxAttempts = 1
                c.delivery.breakerMinRequests = 4
                c.delivery.breakerCoolDownMs = 1000
                c.metricsEnabled = true
            }
        ) { (s: TestServer) async throws in
            for i in 0..<4 {
                let r = try await s.android(TestServer.haBody(token: "cb:\(i)"))
                expectJSONError(r, status: 503, errorType: "ProviderUnavailable")
            }
            #expect(flaky.callCount == 4)
            let refused = try await s.android(TestServer.haBody(token: "cb:open"))
            expectJSONError(refused, status: 503, errorType: "ProviderUnavailable")
            #expect(refused["errorCode"] == "ProviderCircuitOpen")
            #expect(refused["message"]?.stringValue?.contains("failed 4 of 4") == true)
            #expect(refused.headers["retry-after"] == "1")
            #expect(refused.rateLimits == nil, "a refusal by the breaker counts nothing and reads nothing")
            #expect(try await s.post("/api/checkRateLimits", ["push_token": "cb:open"]).int("rateLimits", "attempts") == 0)
            #expect(flaky.callCount == 4, "the provider was not called")
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_circuit_open{provider="fcm"} 1"#))
            #expect(metrics.contains(#"pushrelay_provider_circuit_transitions_total{provider="fcm",to="open"} 1"#))

            // After the cool-down one probe goes through; it succeeds, and the breaker closes.
            s.clock.advance(by: 1.1)
            let probe = try await s.android(TestServer.haBody(token: "cb:probe"))
            #expect(probe.status == 201)
            #expect(try await s.android(TestServer.haBody(token: "cb:after")).status == 201)
            #expect(try await s.request(.GET, "/metrics").rawBody.contains(#"pushrelay_provider_circuit_open{provider="fcm"} 0"#))
        }
    }
}
