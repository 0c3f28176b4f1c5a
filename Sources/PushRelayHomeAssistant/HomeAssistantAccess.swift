import Foundation
import PushRelayCore
import PushRelayHTTP
import PushRelaySecurity

/// Who may use Home Assistant's routes (the notify POSTs and `checkRateLimits`), on the router and the fast path alike.
///
/// Open by default, as the official relay's are. A self-hoster closes them to everyone but their Home Assistant with
/// either or both of:
/// - `home_assistant.keys`: a request must carry one of these secrets as `key` in its query string
///   (`https://relay.example/api/sendPush/android/v1?key=SECRET` in the app's push URL: Home Assistant posts the
///   registration's `push_url` as it is). Compared in constant time, against every key whatever matches;
/// - `home_assistant.allowed_networks`: the request's client (`http.trusted_proxies` decides who that is) must be in
///   one of these networks.
///
/// A refused request is answered 401 (no or a wrong key) or 403 (an address outside the networks) and counts as a
/// failed credential check of its address (`security.max_failed_auths_per_minute`); a blocked address gets 429. A
/// request that passes a closed route's checks is *trusted*: it comes from Home Assistant, so its pair is bound
/// (`PushChannelPairEvidence.proof`).
package struct HomeAssistantAccess: Sendable {
    private let keys: [SecretMatcher]
    private let networks: [OutboundAddressPolicy.Network]
    private let limiter: FailedAuthLimiter?
    private let clock: any TimePort

    /// The query parameter that carries the key.
    static let keyParameter = "key"

    package init(keys: [String] = [], networks: [OutboundAddressPolicy.Network] = [], limiter: FailedAuthLimiter? = nil, clock: any TimePort) {
        self.keys = keys.map { SecretMatcher(secret: $0) }
        self.networks = networks
        self.limiter = limiter
        self.clock = clock
    }

    /// Open to everyone: neither keys nor networks are configured.
    package var isOpen: Bool { keys.isEmpty && networks.isEmpty }

    /// Checks a request for `target` (its path with the query) from `client`. Returns whether it is trusted (false on
    /// open routes); throws the answer to a refused request.
    package func check(target: String, client: String) throws(APIError) -> Bool {
        guard !isOpen else { return false }
        let now = clock.now()
        if let limiter, limiter.isBlocked(client, now: now) { throw .tooManyFailedAttempts }
        if !networks.isEmpty, !Self.contains(networks, client) {
            limiter?.recordFailure(client, now: now)
            throw APIError(
                .forbidden,
                "AddressNotAllowed",
                "This server takes Home Assistant's requests only from the networks in home_assistant.allowed_networks, and this request came from another address."
            )
        }
        if !keys.isEmpty {
            let presented = Self.key(in: target)
            // Every key is compared, whatever matched: the time taken says nothing about which one did.
            var matched = false
            for key in keys where key.matches(presented ?? "") { matched = true }
            guard presented != nil, matched else {
                limiter?.recordFailure(client, now: now)
                throw APIError(
                    .unauthorized,
                    "InvalidKey",
                    presented == nil
                        ? "This server takes Home Assistant's requests only with a key: add ?key=… (one of home_assistant.keys) to the push URL the app registers with Home Assistant."
                        : "The key in the request's query is not one of home_assistant.keys."
                )
            }
        }
        return true
    }

    /// The percent-decoded value of the first `key` parameter of `target`'s query, or nil without one.
    package static func key(in target: String) -> String? {
        guard let q = target.firstIndex(of: "?") else { return nil }
        for item in target[target.index(after: q)...].split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == keyParameter[...] else { continue }
            let raw = parts.count > 1 ? String(parts[1]) : ""
            return raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
        }
        return nil
    }

    private static func contains(_ networks: [OutboundAddressPolicy.Network], _ client: String) -> Bool {
        guard let a = OutboundAddressPolicy.Address(client) else { return false }
        let v4 = a.embeddedIPv4
        return networks.contains { $0.contains(a) || (v4.map($0.contains) ?? false) }
    }
}
