import PushRelayConfiguration
import Testing

/// `metrics.enabled`.
@Suite struct MetricsConfigTests {
    @Test func offUnlessEnabled() throws {
        #expect(try !PushRelayConfig.load(file: nil, environment: [:]).metricsEnabled)
        #expect(try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_METRICS_ENABLED": "true"]).metricsEnabled)
        #expect(configProblem(["metrics": ["enabled": "sometimes"]]) == "metrics.enabled: must be true or false; got \"sometimes\"")
    }
}
