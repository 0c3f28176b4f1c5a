import Foundation
import Hummingbird
import PushRelayCore
import PushRelayHTTP

/// Counts failed credential checks per client address in one-minute windows, so that nobody can guess credentials
/// faster than `security.max_failed_auths_per_minute` per address.
///
/// Every credential PushRelay checks counts in the same budget: websocket authentications and refused subscriptions,
/// the admin token, API keys. A blocked address is refused even a correct credential until its window ends, and the
/// refusal is the same whatever was sent, so being blocked says nothing about the credential. Memory is bounded:
/// each window forgets the addresses of the one before it.
///
/// Addresses are counted by `AddressKey.key(for:)`: an IPv6 client by its /64 (one subscriber's network: whoever has
/// one address of it usually has all of them), an IPv4 client by its address.
package final class FailedAuthLimiter: Sendable {
    private struct Windows {
        var minute: Int64 = 0
        var current: [String: Int] = [:]
        /// The previous minute's counts, weighted down as the current minute passes (a sliding estimate).
        var previous: [String: Int] = [:]
    }

    package let limit: Int
    private let windows = Locked(Windows())

    package init(limit: Int) { self.limit = limit }

    /// Whether `address` (its /64 for IPv6) has used up its failures for now.
    package func isBlocked(_ address: String, now: Date) -> Bool {
        let key = Self.key(for: address)
        return windows.withLock { w in
            Self.roll(&w, now: now)
            return Self.estimate(w, key, now: now) >= Double(limit)
        }
    }

    /// Counts one failure of `address` (its /64 for IPv6). Returns whether the address is blocked now.
    @discardableResult
    package func recordFailure(_ address: String, now: Date) -> Bool {
        let key = Self.key(for: address)
        return windows.withLock { w in
            Self.roll(&w, now: now)
            w.current[key, default: 0] += 1
            return Self.estimate(w, key, now: now) >= Double(limit)
        }
    }

    /// The budget `address` counts in: `AddressKey.key(for:)`, the key of every per-address bound.
    package static func key(for address: String) -> String { AddressKey.key(for: address) }

    /// What `Retry-After` says to a blocked address: a blocked address is free again within a minute.
    package static let retryAfterSeconds = 60
    /// What a blocked address is told, whatever credential it sent.
    package static let blockedMessage =
        "Too many failed credential checks from this address: try again in a minute (security.max_failed_auths_per_minute)."

    private static func roll(_ w: inout Windows, now: Date) {
        let minute = Int64(now.timeIntervalSince1970 / 60)
        guard minute != w.minute else { return }
        w.previous = minute == w.minute + 1 ? w.current : [:]
        w.current = [:]
        w.minute = minute
    }

    private static func estimate(_ w: Windows, _ address: String, now: Date) -> Double {
        let elapsed = now.timeIntervalSince1970.truncatingRemainder(dividingBy: 60) / 60
        return Double(w.current[address, default: 0]) + Double(w.previous[address, default: 0]) * (1 - elapsed)
    }
}

extension APIError {
    /// 429 for an address past its failed credential checks, with `Retry-After`.
    package static var tooManyFailedAttempts: APIError {
        APIError(
            .tooManyRequests,
            "TooManyFailedAttempts",
            FailedAuthLimiter.blockedMessage,
            headers: [.retryAfter: String(FailedAuthLimiter.retryAfterSeconds)]
        )
    }
}
