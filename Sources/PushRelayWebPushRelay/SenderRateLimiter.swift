import Foundation
import PushRelayCore

/// Fixed one-minute windows of requests per sender address (`relay.max_requests_per_minute_per_address`). Addresses
/// count by `AddressKey.key(for:)`: an IPv6 sender's whole /64 shares one limit.
package final class SenderRateLimiter: Sendable {
    private struct Window {
        var minute: Int64 = 0
        var counts: [String: Int] = [:]
    }

    package let limit: Int
    private let window = Locked(Window())

    package init(limit: Int) { self.limit = limit }

    /// Counts one request; false when the address (its /64 for IPv6) is past its limit for the current minute.
    package func allow(_ address: String, now: Date) -> Bool {
        let minute = Int64(now.timeIntervalSince1970 / 60)
        let key = AddressKey.key(for: address)
        return window.withLock { w in
            if w.minute != minute {
                w.minute = minute
                w.counts.removeAll(keepingCapacity: true)
            }
            let n = w.counts[key, default: 0]
            guard n < limit else { return false }
            w.counts[key] = n + 1
            return true
        }
    }
}
