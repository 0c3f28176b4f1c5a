import PushRelayConfiguration
import Testing

/// `security.*`, and `channel.max_failed_auths_per_minute`, the older name of its one key.
@Suite struct SecurityConfigTests {
    @Test func failedAuthLimitHasANewNameAndKeepsItsOldOne() throws {
        #expect(try loadConfig("security:\n  max_failed_auths_per_minute: 4\n", env: [:]).maxFailedAuthsPerMinute == 4)
        #expect(try loadConfig("channel:\n  max_failed_auths_per_minute: 5\n", env: [:]).maxFailedAuthsPerMinute == 5)
        let both = "channel:\n  max_failed_auths_per_minute: 5\nsecurity:\n  max_failed_auths_per_minute: 6\n"
        #expect(try loadConfig(both, env: [:]).maxFailedAuthsPerMinute == 6, "the new name wins")
        #expect(try loadConfig("", env: ["PUSHRELAY_SECURITY_MAX_FAILED_AUTHS_PER_MINUTE": "7"]).maxFailedAuthsPerMinute == 7)
        #expect(throws: ConfigError.self) { try loadConfig("security:\n  max_failed_auths_per_minute: 0\n", env: [:]) }
    }

    @Test func theLimitIsAWholeNumberFrom1() {
        #expect(
            configProblem(["security": ["max_failed_auths_per_minute": 0]])
                == "security.max_failed_auths_per_minute: must be a whole number from 1 to 100000; got 0"
        )
        #expect(
            configProblem(["channel": ["max_failed_auths_per_minute": "x"]])
                == "channel.max_failed_auths_per_minute: must be a whole number from 1 to 100000; got \"x\""
        )
    }
}
