import PushRelayCore
import Testing

@testable import PushRelayServer

/// `http.request_timeout`, `http.idle_timeout` and `http.max_connections_per_address`.
@Suite struct HTTPLimitsConfigTests {
    @Test func defaultsAndOverrides() throws {
        let defaults = try PushRelayConfig.load(file: nil, environment: [:])
        #expect(defaults.http.requestTimeoutMs == 30_000)
        #expect(defaults.http.idleTimeoutMs == 75_000)
        #expect(defaults.http.maxConnectionsPerAddress == 1024)
        let set = try PushRelayConfig.load(
            file: nil,
            environment: [
                "PUSHRELAY_HTTP_REQUEST_TIMEOUT": "20s", "PUSHRELAY_HTTP_IDLE_TIMEOUT": "2m", "PUSHRELAY_HTTP_MAX_CONNECTIONS_PER_ADDRESS": "0",
            ]
        )
        #expect(set.http.requestTimeoutMs == 20_000)
        #expect(set.http.idleTimeoutMs == 120_000)
        #expect(set.http.maxConnectionsPerAddress == 0)
    }

    @Test func aRequestTimeoutShorterThanTheDeliveryDeadlineIsRefused() {
        #expect {
            try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_HTTP_REQUEST_TIMEOUT": "5s", "PUSHRELAY_DELIVERY_DEADLINE_MS": "8000"])
        } throws: { error in
            "\(error)".contains("http.request_timeout") && "\(error)".contains("delivery.deadline_ms")
        }
        #expect(throws: (any Error).self) { try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_HTTP_IDLE_TIMEOUT": "10ms"]) }
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
