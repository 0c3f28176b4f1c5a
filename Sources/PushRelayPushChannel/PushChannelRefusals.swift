import Foundation
import PushRelayCore
import PushRelaySecurity

/// Which refused subscriptions count as failed credential checks (`security.max_failed_auths_per_minute`).
///
/// A refusal counts once per address (an IPv6 client's /64, as `FailedAuthLimiter.key(for:)` counts) and pair (the
/// credential and the webhook id) a minute: a device that reconnects with its own pair after its binding moved is
/// refused again and again, and counts once a minute, so it never locks its address out; someone guessing webhook ids
/// for a token (or tokens for a webhook id) tries a new pair each time, and each one counts as before.
///
/// Memory is bounded: at most `capacity` pairs are remembered (a hash of each, not the pair), each for a minute; when
/// that many are remembered, every further refusal counts.
package final class PushChannelRefusals: Sendable {
    private struct State {
        var seen: [Int: Date] = [:]
    }

    package let capacity: Int
    private let state = Locked(State())
    /// How long a refused pair is remembered.
    package static let window: TimeInterval = 60

    package init(capacity: Int = 16_384) { self.capacity = capacity }

    /// Whether the refusal of `webhookID` for `credential` from `address` at `now` counts as a failed credential check:
    /// false when the same address was refused the same pair within the last minute.
    package func counts(address: String, credential: String, webhookID: String, now: Date) -> Bool {
        var hasher = Hasher()
        hasher.combine(FailedAuthLimiter.key(for: address))
        hasher.combine(credential)
        hasher.combine(webhookID)
        let key = hasher.finalize()
        return state.withLock { s in
            if let at = s.seen[key], now.timeIntervalSince(at) < Self.window { return false }
            if s.seen.count >= capacity { s.seen = s.seen.filter { now.timeIntervalSince($0.value) < Self.window } }
            if s.seen.count < capacity { s.seen[key] = now }
            return true
        }
    }
}
