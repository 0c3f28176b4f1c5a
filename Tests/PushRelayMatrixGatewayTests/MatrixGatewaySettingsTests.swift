import PushRelayConfiguration
import PushRelayCore
import PushRelayMatrixGateway
import Testing

@testable import PushRelayServer

/// The gateway's settings are `matrix:`'s, as the application makes them, and the retry schedule they give.
@Suite struct MatrixGatewaySettingsTests {
    @Test func theyAreTheMatrixSectionsSettings() throws {
        var matrix = PushRelayConfig.Matrix()
        matrix.apps = [
            "im.example.android": .init(provider: "fcm", format: .fcm(.init()), dailyLimit: 7),
            "im.example.*": .init(provider: "apns", format: .apns(.init())),
        ]
        matrix.dedupWindowMs = 60_000
        matrix.maxDevices = 3
        matrix.retry.maxQueued = 5
        matrix.retry.pollIntervalMs = 250
        let settings = MatrixGatewaySettings(matrix)
        let android = try #require(settings.apps["im.example.android"])
        #expect(android.provider == "fcm" && android.format == .fcm(.init()) && android.dailyLimit == 7)
        let glob = try #require(settings.apps["im.example.*"])
        #expect(glob.provider == "apns" && glob.format == .apns(.init()) && glob.dailyLimit == nil)
        #expect(settings.apps.count == 2)
        #expect(settings.dedupWindowMs == 60_000 && settings.maxDevices == 3)
        #expect(settings.retry.maxQueued == 5 && settings.retry.pollIntervalMs == 250)
        #expect(settings.retry.baseDelayMs == 30_000 && settings.retry.maxDelayMs == 3_600_000 && settings.retry.maxAttempts == 10)
    }

    @Test func aRetryWaitsTwiceAsLongEachAttemptUpToTheLongestDelayOrARetryAfter() {
        let retry = MatrixGatewaySettings(PushRelayConfig.Matrix()).retry
        #expect(retry.delayMs(afterAttempts: 1, retryAfterSeconds: nil) == 30_000)
        #expect(retry.delayMs(afterAttempts: 2, retryAfterSeconds: nil) == 60_000)
        #expect(retry.delayMs(afterAttempts: 8, retryAfterSeconds: nil) == 3_600_000)
        #expect(retry.delayMs(afterAttempts: 200, retryAfterSeconds: nil) == 3_600_000)
        #expect(retry.delayMs(afterAttempts: 1, retryAfterSeconds: 90) == 90_000)
        #expect(retry.delayMs(afterAttempts: 2, retryAfterSeconds: 10) == 60_000)
    }
}
