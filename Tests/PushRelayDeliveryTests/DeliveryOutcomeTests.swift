import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// How provider outcomes reach Home Assistant: retries, deadline, dead tokens, bounded in-flight.
@Suite struct DeliveryOutcomeTests {
    static func routeAll(to name: String) -> (inout PushRelayConfig) -> Void {
        { c in
            c.apps = [.init(match: "*", provider: name)]
            c.delivery.retryBaseMs = 5
        }
    }

    @Test func theProvidersMessageIDBecomesMessageId() async throws {
        let p = ScriptedProvider(name: "up", [.deliver])
        try await TestServer.with(providers: ["up": p], configure: Self.routeAll(to: "up")) { (s: TestServer) async throws in
            let r = try await s.android(TestServer.haBody())
            #expect(r.status == 201)
            #expect(r["messageId"] == "up:msg-1")
        }
    }

    @Test func aTransientFailureIsRetriedAndCanSucceed() async throws {
        let p = ScriptedProvider(
            name: "flaky",
            [
                .fail(.transient(reason: "UNAVAILABLE", message: "503", retryAfterSeconds: nil)),
                .fail(.transient(reason: "UNAVAILABLE", message: "503", retryAfterSeconds: nil)),
                .deliver,
            ]
        )
        try await TestServer.with(providers: ["flaky": p], configure: Self.routeAll(to: "flaky")) { (s: TestServer) async throws in
            let r = try await s.android(TestServer.haBody())
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(p.callCount == 3)
            #expect(r.int("rateLimits", "successful") == 1)
            #expect(r.int("rateLimits", "errors") == 0)
        }
    }

    @Test func aRetryAfterIsWaitedOnTheServersClockBeforeTheNextAttempt() async throws {
        let p = ScriptedProvider(
            name: "busy",
            [.fail(.transient(reason: "UNAVAILABLE", message: "503", retryAfterSeconds: 2)), .deliver]
        )
        let clock = ManualClock()
        try await TestServer.with(clock: clock, providers: ["busy": p], configure: Self.routeAll(to: "busy")) { (s: TestServer) async throws in
            async let answer = s.android(TestServer.haBody())
            // The first attempt fails; the next waits the two seconds the provider asked for, on the server's clock.
            _ = await clock.nextScheduled(where: { $0 == .seconds(2) })
            #expect(p.callCount == 1)
            clock.advance(by: .milliseconds(1_999))
            #expect(p.callCount == 1, "not sent again before its Retry-After")
            clock.advance(by: .milliseconds(1))
            let r = try await answer
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(p.callCount == 2)
        }
    }

    @Test func transientPastTheDeadlineIs503WithRetryAfterAndCountsAsAnError() async throws {
        let p = ScriptedProvider(name: "down", [.fail(.transient(reason: "QUOTA_EXCEEDED", message: "429 from FCM", retryAfterSeconds: 60))])
        try await TestServer.with(providers: ["down": p], configure: Self.routeAll(to: "down")) { (s: TestServer) async throws in
            let r = try await s.android(TestServer.haBody())
            expectJSONError(r, status: 503, errorType: "ProviderUnavailable")
            #expect(r.headers["retry-after"] == "60")
            #expect(r["message"]?.stringValue?.contains("down") == true, "the message names the provider")
            #expect(r.int("rateLimits", "errors") == 1)
            #expect(r.int("rateLimits", "successful") == 0)
            // Retry-After (60 s) is beyond the 8 s deadline: no retry is attempted.
            #expect(p.callCount == 1)
        }
    }

    @Test func aHungProviderIsCutOffAtTheDeadline() async throws {
        let p = ScriptedProvider(name: "slow", [.hold(ScriptedProvider.Gate())])  // never opened: the call hangs
        // The deadline's timer runs on the server's clock, which the test moves once the provider call hangs: the time
        // left of the deadline is measured on that clock too, so however long the quota reservation takes on a loaded
        // machine, the timer is set to the whole deadline.
        let clock = ManualClock()
        try await TestServer.with(
            clock: clock,
            providers: ["slow": p],
            configure: { c in
                Self.routeAll(to: "slow")(&c)
                c.delivery.deadlineMs = 7_000
                // One attempt: a retry would wait on the test's clock.
                c.delivery.maxAttempts = 1
            }
        ) { (s: TestServer) async throws in
            async let answer = s.android(TestServer.haBody())
            try await eventually("the provider is called, its deadline set") {
                p.callCount == 1 && clock.pendingDelays.contains(.seconds(7))
            }
            clock.advance(by: 7)
            let r = try await answer
            expectJSONError(r, status: 503, errorType: "ProviderUnavailable")
            // Answered while the provider call was still hanging: it was cut off, not waited for.
            #expect(p.finishedCount == 0)
        }
    }

    @Test func anInvalidTokenIs410AndIsRememberedAsDead() async throws {
        let p = ScriptedProvider(name: "fcm", [.fail(.invalidToken(reason: "UNREGISTERED", message: "Requested entity was not found."))])
        let clock = ManualClock("2026-11-21T12:00:00Z", timers: .real)
        try await TestServer.with(
            clock: clock,
            providers: ["fcm": p],
            configure: { c in
                Self.routeAll(to: "fcm")(&c)
                c.delivery.deadTokenTTLms = 3_600_000
            }
        ) { (s: TestServer) async throws in
            let r = try await s.android(TestServer.haBody())
            expectJSONError(r, status: 410, errorType: "InvalidToken")
            #expect(r["errorCode"] == "UNREGISTERED")
            #expect(r["message"]?.stringValue?.contains("companion app") == true)
            #expect(r.int("rateLimits", "errors") == 1)
            // Later requests: 410 at once, provider not called, nothing counted.
            for path in ["/api/sendPush/android/v1", "/api/sendPushNotification"] {
                let again = try await s.post(path, TestServer.haBody())
                expectJSONError(again, status: 410, errorType: "InvalidToken")
                #expect(again.int("rateLimits", "attempts") == 1)
            }
            let exempt = try await s.android(TestServer.haBody(message: "request_location_update"))
            expectJSONError(exempt, status: 410)
            #expect(p.callCount == 1)
            // After dead_token_ttl the provider is asked again.
            clock.advance(by: 3601)
            expectJSONError(try await s.android(TestServer.haBody()), status: 410)
            #expect(p.callCount == 2)
        }
    }

    @Test func otherFailureClasses() async throws {
        let tooBig = ScriptedProvider(name: "big", [.fail(.payloadTooLarge(message: "APNs payload is 5000 bytes; the limit is 4096."))])
        let misconfigured = ScriptedProvider(
            name: "bad",
            [.fail(.configuration(message: "FCM answered SENDER_ID_MISMATCH: the token belongs to another Firebase project."))]
        )
        let rejected = ScriptedProvider(name: "rej", [.fail(.invalidPayload(reason: "INVALID_ARGUMENT", message: "Invalid TTL"))])
        try await TestServer.with(
            providers: ["big": tooBig, "bad": misconfigured, "rej": rejected],
            configure: { c in
                c.apps = [.init(match: "io.big", provider: "big"), .init(match: "io.bad", provider: "bad"), .init(match: "io.rej", provider: "rej")]
            }
        ) { (s: TestServer) async throws in
            let big = try await s.android(TestServer.haBody(token: "t:1", appID: "io.big"))
            expectJSONError(big, status: 413, errorType: "PayloadTooLarge")
            #expect(big.int("rateLimits", "errors") == 1)
            let bad = try await s.android(TestServer.haBody(token: "t:2", appID: "io.bad"))
            expectJSONError(bad, status: 500, errorType: "ConfigurationError")
            #expect(bad["message"]?.stringValue?.contains("SENDER_ID_MISMATCH") == true)
            let rej = try await s.android(TestServer.haBody(token: "t:3", appID: "io.rej"))
            expectJSONError(rej, status: 400, errorType: "InvalidPayload")
            let unrouted = try await s.android(TestServer.haBody(token: "t:4", appID: "io.nowhere"))
            expectJSONError(unrouted, status: 500, errorType: "ConfigurationError")
            for p in [tooBig, misconfigured, rejected] { #expect(p.callCount == 1, "no retry for \(p.name)") }
        }
    }

    @Test func aSlowProviderDoesNotHoldUpAnother() async throws {
        let gate = ScriptedProvider.Gate()
        let slow = ScriptedProvider(name: "slow", [.hold(gate)])
        let fast = ScriptedProvider(name: "fast", [.deliver])
        // The wait for a place runs on the server's clock, which the test moves.
        let clock = ManualClock()
        try await TestServer.with(
            clock: clock,
            providers: ["slow": slow, "fast": fast],
            configure: { c in
                c.apps = [.init(match: "io.slow", provider: "slow"), .init(match: "*", provider: "fast")]
                c.delivery.maxInFlight = 2
                c.delivery.maxWaitMs = 300
                c.metricsEnabled = true
            }
        ) { (s: TestServer) async throws in
            // Fill the slow provider's two slots.
            async let a = s.android(TestServer.haBody(token: "s:1", appID: "io.slow"))
            async let b = s.android(TestServer.haBody(token: "s:2", appID: "io.slow"))
            try await eventually("both slow calls start") { slow.callCount >= 2 }
            #expect(slow.callCount == 2)
            // A third request to the slow provider waits for a place, and is refused when its wait is over.
            async let refused = s.android(TestServer.haBody(token: "s:3", appID: "io.slow"))
            let wait = await clock.nextScheduled(where: { $0 > .milliseconds(250) && $0 < .milliseconds(350) })
            #expect(wait >= .milliseconds(300), "the wait is max_wait_ms")
            clock.advance(by: wait)
            let busy = try await refused
            expectJSONError(busy, status: 503, errorType: "ProviderUnavailable")
            #expect(busy["errorCode"] == "ProviderBusy")
            #expect(busy.headers["retry-after"] == "1")
            #expect(busy["message"]?.stringValue?.contains("300 ms") == true, "\(busy.rawBody)")
            #expect(busy.rateLimits == nil, "a refusal at the in-flight bound counts nothing and reads nothing")
            #expect(slow.callCount == 2, "the refused request never reached the provider")
            let shedUsage = try await s.post("/api/checkRateLimits", ["push_token": "s:3"])
            #expect(shedUsage.int("rateLimits", "attempts") == 0, "nothing was written for the refused request")
            let metrics = try await s.request(.GET, "/metrics")
            #expect(metrics.rawBody.contains(#"pushrelay_deliveries_shed_total{provider="slow"} 1"#))
            // The fast provider answers meanwhile, while both slow deliveries are still in flight.
            let quick = try await s.android(TestServer.haBody(token: "f:1", appID: "io.fast"))
            #expect(quick.status == 201)
            #expect(slow.finishedCount == 0, "answered before the slow provider finished anything")
            gate.open()
            #expect(try await a.status == 201)
            #expect(try await b.status == 201)
        }
    }
}
