import PushRelayConfiguration
import Testing

/// `log.level` and `log.format`.
@Suite struct LogConfigTests {
    @Test func levelAndFormatInAnyCase() throws {
        let c = try PushRelayConfig.load(file: nil, environment: ["PUSHRELAY_LOG_LEVEL": "DEBUG", "PUSHRELAY_LOG_FORMAT": "Json"])
        #expect(c.logLevel == .debug && c.logFormat == .json)
        let d = try PushRelayConfig.load(file: nil, environment: [:])
        #expect(d.logLevel == .info && d.logFormat == .text)
    }

    @Test func errorsNameTheKeyAndTheChoices() {
        #expect(
            configProblem(["log": ["level": "loud"]]) == "log.level: must be one of trace, debug, info, notice, warning, error, critical; got 'loud'"
        )
        #expect(configProblem(["log": ["format": "xml"]]) == "log.format: must be text or json; got 'xml'")
    }
}
