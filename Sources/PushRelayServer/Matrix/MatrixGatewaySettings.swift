import PushRelayCore

/// What the Matrix gateway runs with: the apps it serves, its de-duplication window, the devices a notify may list and
/// the background retry. The application builds it from `matrix:`.
struct MatrixGatewaySettings: Sendable {
    /// An app the gateway serves.
    struct App: Sendable {
        /// The provider instance its pushes go through.
        var provider: String
        /// The payload shape and its options.
        var format: MatrixFormat
        /// Pushes per pushkey per UTC day; nil: unlimited.
        var dailyLimit: Int?
    }

    /// The background retry of devices that failed transiently after the homeserver got its 200.
    struct Retry: Sendable {
        /// The first retry's delay; it doubles per attempt up to `maxDelayMs`.
        var baseDelayMs: Int64
        var maxDelayMs: Int64
        /// Attempts in total (the first one included) before a device is given up on.
        var maxAttempts: Int
        /// How often the queue is checked for due items.
        var pollIntervalMs: Int64
        /// Devices the queue holds at most; a notify whose failed devices would not fit is answered 502.
        var maxQueued: Int

        /// The delay after `attempts` attempts, at least a `Retry-After` the provider gave.
        func delayMs(afterAttempts attempts: Int, retryAfterSeconds: Int?) -> Int64 {
            let exponent = Int64(min(max(attempts - 1, 0), 30))
            var delay = min(maxDelayMs, baseDelayMs << exponent)
            if let r = retryAfterSeconds { delay = max(delay, Int64(r) * 1000) }
            return delay
        }
    }

    /// App id or glob → the app (`MatrixAppTable` picks one for a device). Empty: every pushkey is rejected.
    var apps: [String: App]
    /// A notification for the same (event_id, pushkey) within this window is not pushed again.
    var dedupWindowMs: Int64
    /// Devices one notify may list; a notify with more is answered 400 before any is pushed.
    var maxDevices: Int
    var retry: Retry
}
