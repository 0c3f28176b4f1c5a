import PushRelayConfiguration
import Testing

/// `quota.*`.
@Suite struct QuotaConfigTests {
    @Test func appLimitsAreSortedByGlobAndEveryKeyIsRead() throws {
        let q = try PushRelayConfig.Quota(
            reading: ConfigTreeReader(
                tree: [
                    "quota": [
                        "daily_limit": 50, "exempt_commands": false, "exempt_critical": "false", "retention_days": 7,
                        "app_limits": ["io.z.*": 3, "io.a.*": 0],
                    ]
                ]
            )
        )
        #expect(q.dailyLimit == 50 && !q.exemptCommands && !q.exemptCritical && q.retentionDays == 7)
        #expect(q.appLimits.map(\.pattern) == ["io.a.*", "io.z.*"] && q.appLimits.map(\.limit) == [0, 3])
    }

    @Test func errorsNameTheKey() {
        #expect(configProblem(["quota": ["daily_limit": -5]]) == "quota.daily_limit: must be a whole number from 0 to 10000000; got -5")
        #expect(configProblem(["quota": ["exempt_commands": "maybe"]]) == "quota.exempt_commands: must be true or false; got \"maybe\"")
        #expect(configProblem(["quota": ["retention_days": 0]]) == "quota.retention_days: must be a whole number from 1 to 3650; got 0")
        #expect(configProblem(["quota": ["app_limits": ["io.x": "lots"]]]) == "quota.app_limits.io.x: must be a whole number from 0 to 10000000")
        #expect(configProblem(["quota": ["app_limits": [1]]]) == "quota.app_limits: must be a mapping")
    }
}
