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
