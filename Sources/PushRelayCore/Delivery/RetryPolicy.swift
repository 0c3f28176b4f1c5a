import Foundation

/// When to retry a transient provider failure: exponential backoff with full jitter, honouring `Retry-After`,
/// and never past the request's delivery deadline. Pure: the caller supplies the random number and the time left.
public struct RetryPolicy: Sendable, Equatable {
    /// First backoff (before jitter).
    public var baseDelayMs: Int
    /// Largest backoff (before jitter).
    public var maxDelayMs: Int
    /// Attempts in total, the first one included.
    public var maxAttempts: Int

    public init(baseDelayMs: Int = 100, maxDelayMs: Int = 2000, maxAttempts: Int = 4) {
        self.baseDelayMs = baseDelayMs
        self.maxDelayMs = maxDelayMs
        self.maxAttempts = maxAttempts
    }

    /// The delay before attempt `attempt + 1` (attempt counts from 1), or nil to give up.
    /// - Parameters:
    ///   - retryAfterSeconds: the provider's `Retry-After`, which is a floor for the delay.
    ///   - remainingMs: time left before the delivery deadline.
    ///   - jitter: a number in `0..<1` (full jitter: the delay is uniform in `[0, backoff)`).
    public func delayMs(afterAttempt attempt: Int, retryAfterSeconds: Int?, remainingMs: Int, jitter: Double) -> Int? {
        guard attempt < maxAttempts else { return nil }
        let exponent = min(attempt - 1, 20)
        let backoff = min(maxDelayMs, baseDelayMs << exponent)
        var delay = Int(Double(backoff) * min(max(jitter, 0), 0.999_999))
        if let retryAfterSeconds {
            delay = max(delay, retryAfterSeconds * 1000)
        }
        // Leave the next attempt some time to run: retrying with less than 10% of the delay left is pointless.
        guard delay + max(50, delay / 10) < remainingMs else { return nil }
        return delay
    }
}

/// Parses durations written in config: whole seconds (`3600`) or a number with a unit (`500ms`, `90s`, `30m`, `24h`, `7d`).
public enum DurationText {
    public static func milliseconds(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            guard let n = Int64(t.dropLast(suffix.count)), n >= 0 else { return nil }
            let (r, overflow) = n.multipliedReportingOverflow(by: factor)
            return overflow ? nil : r
        }
        guard let n = Int64(t), n >= 0 else { return nil }
        return n * 1000
    }
}
