import PushRelayCore
import PushRelayWebPushRelay

extension PushRelayConfig {
    /// No variable sets them.
    static let relayKeys: [ConfigKey] = [
        .fileOnly("apns_provider"), .fileOnly("fcm_provider"), .fileOnly("alert_text"), .fileOnly("unsubscribe_allowed_hosts"),
        .fileOnly("daily_limit_per_token"), .fileOnly("max_requests_per_minute_per_address"), .fileOnly("max_body_bytes"),
        .fileOnly("unsubscribe_allowed_private_networks"),
    ]
}

extension WebPushRelaySettings {
    /// Reads `relay.*` over the defaults (after `providers`: the providers it names must exist with the right type).
    package init(reading r: ConfigTreeReader, providers: ProviderReferences) throws {
        self.init()
        apnsProvider = try providers.name(r, "relay.apns_provider", type: "apns")
        fcmProvider = try providers.name(r, "relay.fcm_provider", type: "fcm")
        if let v = try r.string("relay.alert_text") {
            guard !v.isEmpty, v.utf8.count <= 256 else { throw ConfigError(key: "relay.alert_text", problem: "must be 1 to 256 bytes of text") }
            alertText = v
        }
        if let hosts = try r.array("relay.unsubscribe_allowed_hosts") {
            unsubscribeAllowedHosts = try hosts.enumerated().map { (k, v) in
                guard case .string(let s) = v, !s.isEmpty, !s.contains("/"), !s.contains(":") || s.hasPrefix("[") else {
                    throw ConfigError(
                        key: "relay.unsubscribe_allowed_hosts[\(k)]",
                        problem: "must be a host name such as mastodon.example (no scheme, port or path)"
                    )
                }
                return s.lowercased()
            }
        }
        if let list = try r.array("relay.unsubscribe_allowed_private_networks") {
            let networks = list.map { v -> String in if case .string(let s) = v { s } else { "" } }
            switch OutboundAddressPolicy.networks(networks) {
            case .success(let n): unsubscribeAddressPolicy = OutboundAddressPolicy(allowedNetworks: n)
            case .failure(let e):
                throw ConfigError(
                    key: "relay.unsubscribe_allowed_private_networks[\(e.index)]",
                    problem: "must be a network in CIDR form, such as 10.0.0.0/8 or fd00::/8"
                )
            }
        }
        if let v = try r.int("relay.daily_limit_per_token", range: 0...10_000_000) { dailyLimitPerToken = v }
        if let v = try r.int("relay.max_requests_per_minute_per_address", range: 0...10_000_000) { maxRequestsPerMinutePerAddress = v }
        if let v = try r.int("relay.max_body_bytes", range: 4096...65_536) { maxBodyBytes = v }
    }
}
