import Crypto
import Foundation
import PushRelayCore
import Synchronization

/// The APNs provider JWT, shared by all requests of one provider.
///
/// Apple wants the token refreshed no more than once every 20 minutes and no less than once an hour:
/// - routine: reused until it is `refreshAfter` (50 min) old, then regenerated;
/// - forced (`renew(after:)`, on 403 `ExpiredProviderToken`): regenerated at once, but a token that was itself
///   forced is not replaced again before `minimumInterval` (20 min) — so a clock problem cannot turn into
///   `TooManyProviderTokenUpdates`.
///
/// Ages are read from the injected `TimePort`; `iat` is whole seconds.
final class APNsProviderTokenCache: Sendable {
    struct Token: Sendable {
        var value: String
        var issuedAt: Date
        var forced: Bool
    }

    static let refreshAfter: TimeInterval = 50 * 60
    static let minimumInterval: TimeInterval = 20 * 60

    private let keyID: String
    private let teamID: String
    private let key: P256.Signing.PrivateKey
    private let clock: any TimePort
    private let state = Locked<Token?>(nil)
    private let generated = Atomic<Int>(0)

    init(keyID: String, teamID: String, key: P256.Signing.PrivateKey, clock: any TimePort) {
        self.keyID = keyID
        self.teamID = teamID
        self.key = key
        self.clock = clock
    }

    /// How many tokens were signed so far.
    var generatedCount: Int { generated.load(ordering: .relaxed) }

    /// The token to use now.
    func current() throws -> String {
        let now = clock.now()
        return try state.withLock { token throws -> String in
            if let t = token {
                let age = now.timeIntervalSince(t.issuedAt)
                // A clock set back by more than a minute also warrants a new token.
                if age < Self.refreshAfter, age > -60 { return t.value }
            }
            let fresh = try sign(now: now, forced: false)
            token = fresh
            return fresh.value
        }
    }

    /// APNs called `rejected` expired. Returns the token to retry with, or nil when the 20-minute floor forbids
    /// another forced regeneration.
    func renew(after rejected: String) throws -> String? {
        let now = clock.now()
        return try state.withLock { token throws -> String? in
            if let t = token, t.value != rejected { return t.value }
            if let t = token, t.forced, now.timeIntervalSince(t.issuedAt) < Self.minimumInterval { return nil }
            let fresh = try sign(now: now, forced: true)
            token = fresh
            return fresh.value
        }
    }

    private func sign(now: Date, forced: Bool) throws -> Token {
        let header: JSONValue = ["alg": "ES256", "kid": .string(keyID)]
        let claims: JSONValue = ["iss": .string(teamID), "iat": .int(CompactJWT.unixSeconds(now))]
        let value = try CompactJWT.es256(header: header, claims: claims, key: key)
        generated.add(1, ordering: .relaxed)
        return Token(value: value, issuedAt: Date(timeIntervalSince1970: TimeInterval(CompactJWT.unixSeconds(now))), forced: forced)
    }
}
