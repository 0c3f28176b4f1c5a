import Foundation
import PushRelayCore

/// The `Authorization` header of each push service (audience), signed once and reused while its JWT has more than
/// `refreshMargin` seconds to live, so an ES256 signature is made about once per audience per lifetime instead of once
/// per message.
///
/// At most `capacity` audiences are kept: a new one first evicts those due for renewal, then, if none is, the one that
/// expires first. Thread-safe; the time is the caller's (`now`), so tests step it. Concurrent first sends to one
/// audience may each sign; every token they get is valid.
public final class VAPIDAuthorizations: Sendable {
    /// One signed header and its JWT's `exp` (unix seconds).
    struct Entry: Sendable {
        var header: String
        var expires: Int64
    }

    public let signer: VAPIDSigner
    /// A token with no more than this many seconds left is signed again (push services reject an expired one, and
    /// clocks differ).
    public let refreshMargin: Int64
    public let capacity: Int
    private let entries = Locked<[String: Entry]>([:])

    /// - Parameters:
    ///   - refreshMargin: at most half the signer's lifetime, so a token is used for at least the other half.
    ///   - capacity: how many audiences are kept (at least 1).
    public init(signer: VAPIDSigner, refreshMargin: Int64 = 3600, capacity: Int = 1024) {
        self.signer = signer
        self.refreshMargin = min(max(refreshMargin, 0), signer.lifetimeSeconds / 2)
        self.capacity = max(capacity, 1)
    }

    /// `vapid t=<JWT>, k=<key>` for `audience` (a push service origin, `VAPIDSigner.audience(forEndpoint:)`), valid at
    /// `now` for more than `refreshMargin` seconds.
    public func header(audience: String, now: Date) -> String {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if let entry = entries.withLock({ $0[audience] }), entry.expires - seconds > refreshMargin { return entry.header }
        let (jwt, expires) = signer.token(audience: audience, now: now)
        let entry = Entry(header: signer.authorization(jwt: jwt), expires: expires)
        entries.withLock { entries in
            if entries[audience] == nil && entries.count >= capacity { evict(&entries, at: seconds) }
            entries[audience] = entry
        }
        return entry.header
    }

    /// How many audiences are kept now.
    public var count: Int { entries.withLock { $0.count } }

    /// Makes room for one entry: drops every entry due for renewal at `seconds`, or else the one that expires first.
    private func evict(_ entries: inout [String: Entry], at seconds: Int64) {
        let before = entries.count
        entries = entries.filter { $0.value.expires - seconds > refreshMargin }
        if entries.count < before { return }
        if let first = entries.min(by: { $0.value.expires < $1.value.expires }) { entries[first.key] = nil }
    }
}
