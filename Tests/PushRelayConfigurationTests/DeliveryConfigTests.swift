import PushRelayConfiguration
import PushRelayCore
import Testing

/// `delivery.*`.
@Suite struct DeliveryConfigTests {
    @Test func theWaitForAPlaceIsHalfTheDeadlineUnlessSet() throws {
        #expect(try loadConfig("delivery:\n  deadline_ms: 3000\n").delivery.maxWaitMs == 1500)
        #expect(try loadConfig("delivery:\n  deadline_ms: 3000\n  max_wait_ms: 0\n").delivery.maxWaitMs == 0)
        #expect(try loadConfig("", env: ["PUSHRELAY_DELIVERY_MAX_WAIT_MS": "2500"]).delivery.maxWaitMs == 2500)
    }

    @Test func eachKeyIsReadAndItsErrorsNameIt() throws {
        let d = try DeliverySettings(
            reading: ConfigTreeReader(
                tree: ["delivery": ["dead_token_ttl": "2d", "max_in_flight": 64, "retry_base_ms": 250, "max_attempts": 2, "breaker_min_requests": 5]]
            ),
            requestTimeoutMs: 30_000
        )
        #expect(d.deadTokenTTLms == 2 * 86_400_000 && d.maxInFlight == 64 && d.retryBaseMs == 250 && d.maxAttempts == 2)
        #expect(d.breakerMinRequests == 5 && d.retryPolicy == RetryPolicy(baseDelayMs: 250, maxDelayMs: 2000, maxAttempts: 2))
        #expect(
            configProblem(["delivery": ["breaker_failure_ratio": 0]]) == "delivery.breaker_failure_ratio: must be a number above 0 and at most 1"
        )
        #expect(configProblem(["delivery": ["breaker_window": "10ms"]]) == "delivery.breaker_window: must be at least 1s")
        #expect(
            configProblem(["delivery": ["max_wait_ms": 8000]])
                == "delivery.max_wait_ms: must be shorter than delivery.deadline_ms (8000 ms), which the wait is part of"
        )
        #expect(configProblem(["delivery": ["max_attempts": 11]]) == "delivery.max_attempts: must be a whole number from 1 to 10; got 11")
    }

    @Test func theRequestTimeoutMustOutlastTheDeadline() {
        let r = ConfigTreeReader(tree: ["delivery": ["deadline_ms": 5000]])
        #expect(
            configProblem { _ = try DeliverySettings(reading: r, requestTimeoutMs: 5000) }
                == "http.request_timeout: must be longer than delivery.deadline_ms (5000 ms), which an answer may wait for"
        )
        #expect(configProblem { _ = try DeliverySettings(reading: r, requestTimeoutMs: 5001) } == "accepted")
    }
}

/// `delivery.breaker_*`.
@Suite struct CircuitBreakerConfigTests {
    @Test func defaultsOverridesAndOff() throws {
        let d = try PushRelayConfig.load(file: nil, environment: [:])
        #expect(d.delivery.breaker == .init(failureRatio: 0.5, minimumRequests: 20, window: 30, coolDown: 30, probeTimeout: 16))
        let set = try PushRelayConfig.load(
            file: nil,
            environment: ["PUSHRELAY_DELIVERY_BREAKER_FAILURE_RATIO": "0.8", "PUSHRELAY_DELIVERY_BREAKER_COOL_DOWN": "2m"]
        )
        #expect(set.delivery.breaker?.failureRatio == 0.8)
        #expect(set.delivery.breaker?.coolDown == 120)
        #expect(try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_DELIVERY_BREAKER_COOL_DOWN": "0"]).delivery.breaker == nil)
        #expect(throws: (any Error).self) { try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_DELIVERY_BREAKER_FAILURE_RATIO": "2"]) }
    }
}
