import PushRelayConfiguration
import PushRelayMatrixGateway
extension MatrixGatewaySettings {
    /// The gateway's settings from `matrix:`.
    init(_ matrix: PushRelayConfig.Matrix) {
        self.init(
            apps: matrix.apps.mapValues { App(provider: $0.provider, format: $0.format, dailyLimit: $0.dailyLimit) },
            dedupWindowMs: matrix.dedupWindowMs,
            maxDevices: matrix.maxDevices,
            retry: Retry(
                baseDelayMs: matrix.retry.baseDelayMs,
                maxDelayMs: matrix.retry.maxDelayMs,
                maxAttempts: matrix.retry.maxAttempts,
                pollIntervalMs: matrix.retry.pollIntervalMs,
                maxQueued: matrix.retry.maxQueued
            )
        )
    }
}
