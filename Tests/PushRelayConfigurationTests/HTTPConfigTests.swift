import PushRelayConfiguration
import PushRelayCore
import Testing

/// `http.request_timeout`, `http.idle_timeout`, `http.drain_period`, `http.max_connections_per_address` and
/// `http.trusted_proxies`.
@Suite struct HTTPConfigTests {
    @Test func defaultsAndOverrides() throws {
        let defaults = try PushRelayConfig.load(file: nil, environment: [:])
        #expect(defaults.http.requestTimeoutMs == 30_000)
        #expect(defaults.http.idleTimeoutMs == 75_000)
        #expect(defaults.http.drainPeriodMs == 5_000)
        #expect(defaults.http.maxConnectionsPerAddress == 1024)
        let set = try PushRelayConfig.load(
            file: nil,
            environment: [
                "PUSHRELAY_HTTP_REQUEST_TIMEOUT": "20s", "PUSHRELAY_HTTP_IDLE_TIMEOUT": "2m", "PUSHRELAY_HTTP_MAX_CONNECTIONS_PER_ADDRESS": "0",
                "PUSHRELAY_HTTP_DRAIN_PERIOD": "0",
            ]
        )
        #expect(set.http.drainPeriodMs == 0)
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
        #expect {
            try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_HTTP_DRAIN_PERIOD": "1h"])
        } throws: { error in
            "\(error)".contains("http.drain_period: must be at most 10m")
        }
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

    @Test func eachKeyIsReadAndItsErrorsNameIt() throws {
        let http = try PushRelayConfig.HTTP(
            reading: ConfigTreeReader(tree: ["http": ["host": "0.0.0.0", "port": 9000, "max_body_bytes": 2048, "idle_timeout": "90s"]])
        )
        #expect(http.host == "0.0.0.0" && http.port == 9000 && http.maxBodyBytes == 2048 && http.idleTimeoutMs == 90_000)
        #expect(configProblem(["http": ["host": ""]]) == "http.host: must not be empty")
        #expect(configProblem(["http": ["port": 70000]]) == "http.port: must be a whole number from 0 to 65535; got 70000")
        #expect(configProblem(["http": ["max_body_bytes": 10]]) == "http.max_body_bytes: must be a whole number from 1024 to 67108864; got 10")
        #expect(configProblem(["http": ["request_timeout": "500ms"]]) == "http.request_timeout: must be at least 1s")
        #expect(
            configProblem(["http": ["idle_timeout": "soon"]])
                == "http.idle_timeout: must be a duration such as 3600 (seconds), 90m, 24h or 7d; got 'soon'"
        )
        #expect(
            configProblem(["http": ["trusted_proxies": 5]]) == "http.trusted_proxies: must be a list of addresses or networks in CIDR form"
        )
    }
}
