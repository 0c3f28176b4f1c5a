import PushRelayCore
import Testing

@testable import PushRelayServer

/// `http.request_timeout`, `http.idle_timeout`, `http.max_connections_per_address` and `http.trusted_proxies`.
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

    @Test func trustedProxiesAreAListOrACommaSeparatedString() throws {
        #expect(try PushRelayConfig.load(file: nil, environment: [:]).http.trustedProxies.isEmpty)
        let list = try PushRelayConfig(tree: ["http": ["trusted_proxies": ["127.0.0.1", "10.0.0.0/8", "fd00::/8"]]])
        #expect(list.http.trustedProxies.networks.map(\.description) == ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"])
        let env = try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_HTTP_TRUSTED_PROXIES": "127.0.0.1, 192.168.0.0/16"])
        #expect(env.http.trustedProxies.trusts("192.168.4.2") && env.http.trustedProxies.trusts("127.0.0.1"))
        #expect(!env.http.trustedProxies.trusts("192.169.0.1"))
        #expect {
            try PushRelayConfig(tree: ["http": ["trusted_proxies": ["127.0.0.1", "proxy.example"]]])
        } throws: { error in
            "\(error)".contains("http.trusted_proxies[1]") && "\(error)".contains("proxy.example")
        }
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
