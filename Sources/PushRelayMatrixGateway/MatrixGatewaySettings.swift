import PushRelayCore

/// What the Matrix gateway runs with: the apps it serves, its de-duplication window, the devices a notify may list and
/// the background retry. The application builds it from `matrix:`.
package struct MatrixGatewaySettings: Sendable {
    /// An app the gateway serves.
    package struct App: Sendable {
        /// The provider instance its pushes go through.
        package var provider: String
        /// The payload shape and its options.
        package var format: MatrixFormat
        /// Pushes per pushkey per UTC day; nil: unlimited.
        package var dailyLimit: Int?

        package init(provider: String, format: MatrixFormat, dailyLimit: Int?) {
            self.provider = provider
            self.format = format
            self.dailyLimit = dailyLimit
        }
    }

    /// The background retry of devices that failed transiently after the homeserver got its 200.
    package struct Retry: Sendable {
        /// The first retry's delay; it doubles per attempt up to `maxDelayMs`.
        package var baseDelayMs: Int64
        package var maxDelayMs: Int64
        /// Attempts in total (the first one included) before a device is given up on.
        package var maxAttempts: Int
        /// How often the queue is checked for due items.
        package var pollIntervalMs: Int64
        /// Devices the queue holds at most; a notify whose failed devices would not fit is answered 502.
        package var maxQueued: Int

        package init(baseDelayMs: Int64, maxDelayMs: Int64, maxAttempts: Int, pollIntervalMs: Int64, maxQueued: Int) {
            self.baseDelayMs = baseDelayMs
            self.maxDelayMs = maxDelayMs
            self.maxAttempts = maxAttempts
            self.pollIntervalMs = pollIntervalMs
            self.maxQueued = maxQueued
        }

        /// The delay after `attempts` attempts, at least a `Retry-After` the provider gave.
        package func delayMs(afterAttempts attempts: Int, retryAfterSeconds: Int?) -> Int64 {
            let exponent = Int64(min(max(attempts - 1, 0), 30))
            var delay = min(maxDelayMs, baseDelayMs << exponent)
            if let r = retryAfterSeconds { delay = max(delay, Int64(r) * 1000) }
            return delay
        }
    }

    /// App id or glob → the app (`MatrixAppTable` picks one for a device). Empty: every pushkey is rejected.
    package var apps: [String: App]
    /// A notification for the same (event_id, pushkey) within this window is not pushed again.
    package var dedupWindowMs: Int64
    /// Devices one notify may list; a notify with more is answered 400 before any is pushed.
    package var maxDevices: Int
    package var retry: Retry

    package init(apps: [String: App], dedupWindowMs: Int64, maxDevices: Int, retry: Retry) {
        self.apps = apps
        self.dedupWindowMs = dedupWindowMs
        self.maxDevices = maxDevices
        self.retry = retry
    }
}
