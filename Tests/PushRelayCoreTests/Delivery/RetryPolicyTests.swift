import Testing

@testable import PushRelayCore

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 4)

    @Test func backoffGrowsExponentiallyWithFullJitter() {
        #expect(policy.delayMs(afterAttempt: 1, retryAfterSeconds: nil, remainingMs: 10_000, jitter: 0.5) == 50)
        #expect(policy.delayMs(afterAttempt: 2, retryAfterSeconds: nil, remainingMs: 10_000, jitter: 0.5) == 100)
        #expect(policy.delayMs(afterAttempt: 3, retryAfterSeconds: nil, remainingMs: 10_000, jitter: 0.5) == 200)
        #expect(policy.delayMs(afterAttempt: 1, retryAfterSeconds: nil, remainingMs: 10_000, jitter: 0) == 0)
        let capped = RetryPolicy(baseDelayMs: 100, maxDelayMs: 300, maxAttempts: 10)
        #expect(capped.delayMs(afterAttempt: 8, retryAfterSeconds: nil, remainingMs: 10_000, jitter: 0.999) == 299)
    }

    @Test func givesUpAfterMaxAttempts() {
        #expect(policy.delayMs(afterAttempt: 4, retryAfterSeconds: nil, remainingMs: 10_000, jitter: 0.5) == nil)
    }

    @Test func honoursRetryAfterAndTheDeadline() {
        #expect(policy.delayMs(afterAttempt: 1, retryAfterSeconds: 2, remainingMs: 8_000, jitter: 0.1) == 2_000)
        #expect(policy.delayMs(afterAttempt: 1, retryAfterSeconds: 60, remainingMs: 8_000, jitter: 0.1) == nil)
        #expect(policy.delayMs(afterAttempt: 1, retryAfterSeconds: nil, remainingMs: 40, jitter: 0.1) == nil)
    }

    @Test func durations() {
        #expect(DurationText.milliseconds("3600") == 3_600_000)
        #expect(DurationText.milliseconds("500ms") == 500)
        #expect(DurationText.milliseconds("90s") == 90_000)
        #expect(DurationText.milliseconds("30m") == 1_800_000)
        #expect(DurationText.milliseconds("24h") == 86_400_000)
        #expect(DurationText.milliseconds("7d") == 604_800_000)
        #expect(DurationText.milliseconds("soon") == nil)
        #expect(DurationText.milliseconds("-5s") == nil)
        #expect(DurationText.milliseconds("99999999999999999d") == nil)
    }
}
