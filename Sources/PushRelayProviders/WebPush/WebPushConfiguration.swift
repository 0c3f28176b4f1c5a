import Crypto
import Foundation
import PushRelayCore
import PushRelayWebPush

extension WebPushProvider {
    /// The options of a `type: webpush` provider.
    ///
    /// ```yaml
    /// providers:
    ///   web:
    ///     type: webpush
    ///     vapid_private_key: vapid_private_key.pem   # a PEM file (or the PEM text inline)
    ///     vapid_contact_email: admin@example.com      # sent as sub: mailto:admin@example.com
    ///     allowed_endpoints:                          # push service hosts (globs); nothing else is ever contacted
    ///       - fcm.googleapis.com
    ///       - updates.push.services.mozilla.com
    ///       - "*.push.apple.com"
    ///       - "*.notify.windows.com"
    ///     allowed_private_networks: []                # CIDRs of non-public addresses that may be contacted (default none)
    ///     ttl: 900                                    # seconds a push service keeps an undelivered message
    ///     ca_file: /path/extra-ca.pem                 # tests only
    /// ```
    public struct Configuration: ProviderConfiguration {
        /// `vapid_private_key`: the P-256 key that signs VAPID JWTs.
        public var vapidKey: P256.Signing.PrivateKey
        /// `vapid_contact_email`, as the JWT's `sub` (`mailto:…`).
        public var contact: String
        /// `allowed_endpoints`: globs matched against an endpoint's host (or `host:port` when it names a port).
        public var allowedEndpoints: [String]
        /// `allowed_private_networks`: loopback, private, link-local… networks an endpoint may resolve to. Empty by
        /// default: an endpoint whose host is or resolves to such an address is refused (`OutboundAddressPolicy`).
        public var addressPolicy: OutboundAddressPolicy
        /// `ttl`: seconds, sent as the `TTL` header.
        public var ttlSeconds: Int
        /// `request_timeout_ms`.
        public var requestTimeoutMilliseconds: Int
        var transport: ProviderTransport

        /// The browsers' push services, used when `allowed_endpoints` is not given.
        public static let defaultAllowedEndpoints = [
            "fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com",
        ]
        static let keys: Set<String> = [
            "vapid_private_key", "vapid_contact_email", "allowed_endpoints", "ttl", "ca_file", "max_connections", "request_timeout_ms",
            "allowed_private_networks",
        ]

        public init(options: [String: JSONValue], baseDirectory: String?) throws(ProviderConfigError) {
            let o = try ProviderOptions(options, allowed: Self.keys, baseDirectory: baseDirectory, providerType: "webpush")
            let keyValue = try o.requiredString(
                "vapid_private_key",
                hint: "a PEM file with the VAPID private key (make one with `pushrelay webpush generate-vapid-key`), or the PEM text itself"
            )
            let pem: String
            if keyValue.contains("-----BEGIN") {
                pem = keyValue
            } else {
                pem = try o.fileContents("vapid_private_key") ?? ""
            }
            guard let key = VAPIDKey.parse(pem) else {
                throw ProviderConfigError(
                    key: "vapid_private_key",
                    problem: "is not a P-256 private key in PEM form (PKCS#8 'PRIVATE KEY' or SEC1 'EC PRIVATE KEY')"
                )
            }
            vapidKey = key
            let email = try o.requiredString(
                "vapid_contact_email",
                hint: "an e-mail address push services can reach the operator at (sent as sub: mailto:…)"
            )
            let bare = email.lowercased().hasPrefix("mailto:") ? String(email.dropFirst(7)) : email
            guard email.lowercased().hasPrefix("https:") || (bare.contains("@") && !bare.contains(where: { $0 == " " || $0 == "," })) else {
                throw ProviderConfigError(key: "vapid_contact_email", problem: "'\(email)' is not an e-mail address")
            }
            contact = email
            switch options["allowed_endpoints"] {
            case nil, .null?:
                allowedEndpoints = Self.defaultAllowedEndpoints
            case .array(let list)?:
                allowedEndpoints = try list.enumerated().map { (k, v) throws(ProviderConfigError) -> String in
                    guard case .string(let s) = v, !s.isEmpty else {
                        throw ProviderConfigError(key: "allowed_endpoints[\(k)]", problem: "must be a host name or glob such as '*.push.apple.com'")
                    }
                    return s.lowercased()
                }
                guard !allowedEndpoints.isEmpty else {
                    throw ProviderConfigError(key: "allowed_endpoints", problem: "must list at least one push service host")
                }
            default:
                throw ProviderConfigError(key: "allowed_endpoints", problem: "must be a list of host names or globs")
            }
            addressPolicy = OutboundAddressPolicy(allowedNetworks: try Self.networks(options["allowed_private_networks"]))
            ttlSeconds = try o.int("ttl", in: 0...2_419_200) ?? 900
            requestTimeoutMilliseconds = try o.int("request_timeout_ms", in: 100...120_000) ?? 10_000
            transport = ProviderTransport()
            transport.maxConnections = try o.int("max_connections", in: 1...1024) ?? 20
            transport.requestTimeout = .milliseconds(Int64(requestTimeoutMilliseconds))
            if let ca = try o.path("ca_file") {
                transport.extraTrustRoots = try ProviderTransport.loadTrustRoots(path: ca, key: "ca_file")
            }
        }

        /// Reads `allowed_private_networks`: a list of CIDRs (`127.0.0.1/32`, `10.0.0.0/8`, `fd00::/8`).
        static func networks(_ value: JSONValue?) throws(ProviderConfigError) -> [OutboundAddressPolicy.Network] {
            let problem = "must be a list of networks in CIDR form, such as 10.0.0.0/8 or fd00::/8"
            switch value {
            case nil, .null?:
                return []
            case .array(let list)?:
                var out: [OutboundAddressPolicy.Network] = []
                for (k, v) in list.enumerated() {
                    guard case .string(let s) = v, let n = OutboundAddressPolicy.Network(cidr: s) else {
                        throw ProviderConfigError(key: "allowed_private_networks[\(k)]", problem: problem)
                    }
                    out.append(n)
                }
                return out
            default:
                throw ProviderConfigError(key: "allowed_private_networks", problem: problem)
            }
        }

        /// Whether PushRelay may contact this endpoint: `https`, and its host (or `host:port`) matches a glob.
        public func allows(endpoint: String) -> Bool {
            guard let netloc = Self.netloc(endpoint) else { return false }
            return allowedEndpoints.contains { Glob($0).matches(netloc) }
        }

        /// `host` or `host:port` of an https URL; nil for anything else.
        static func netloc(_ endpoint: String) -> String? {
            guard let url = URLComponents(string: endpoint), url.scheme?.lowercased() == "https",
                let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.password == nil
            else { return nil }
            return url.port.map { "\(host):\($0)" } ?? host
        }
    }
}
