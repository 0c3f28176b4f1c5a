import Foundation
import PushRelayCore

extension PushRelayConfig {
    /// `http:`: where the server listens and what it accepts from a client.
    public struct HTTP: Sendable {
        public init() {}
        public var host = "127.0.0.1"
        public var port = 8080
        /// Larger request bodies are answered 413.
        public var maxBodyBytes = 256 * 1024
        /// `http.request_timeout`: from a request's first byte to its answer; a client that has not sent its whole
        /// request by then (a slowloris, a trickled body) gets 408 and the connection closes. Longer than the
        /// delivery deadline, which the answer may wait for.
        public var requestTimeoutMs: Int64 = 30_000
        /// `http.idle_timeout`: a keep-alive connection with no request for this long is closed.
        public var idleTimeoutMs: Int64 = 75_000
        /// `http.drain_period`: after a stop begins (SIGTERM), how long the server goes on accepting and serving while
        /// `/ready` answers 503, so that a load balancer takes the instance out before it stops accepting. 0: none.
        public var drainPeriodMs: Int64 = 5_000
        /// `http.max_connections_per_address`: open connections (websockets included) one client address may hold;
        /// further ones are closed at once. 0: no limit.
        public var maxConnectionsPerAddress = 1024
        /// `http.trusted_proxies`: reverse proxies (addresses or CIDR networks) whose `X-Forwarded-For` / `Forwarded`
        /// name the client, for the per-address budgets and the logs. Empty: every request is its connection's peer.
        public var trustedProxies = TrustedProxies()
    }

    static let httpKeys: [ConfigKey] = [
        "host", "port", "max_body_bytes", "request_timeout", "idle_timeout", "drain_period", "max_connections_per_address",
        "trusted_proxies",
    ]
}

extension PushRelayConfig.HTTP {
    /// Reads `http.*` over the defaults. That the request timeout outlasts the delivery deadline is checked by
    /// `Delivery(reading:requestTimeoutMs:)`, once the deadline is known.
    package init(reading r: ConfigTreeReader) throws {
        self.init()
        if let v = try r.string("http.host") {
            guard !v.isEmpty else { throw ConfigError(key: "http.host", problem: "must not be empty") }
            host = v
        }
        if let v = try r.int("http.port", range: 0...65535) { port = v }
        if let v = try r.int("http.max_body_bytes", range: 1024...(64 * 1024 * 1024)) { maxBodyBytes = v }
        if let ms = try r.durationMs("http.request_timeout") {
            guard ms >= 1000 else { throw ConfigError(key: "http.request_timeout", problem: "must be at least 1s") }
            requestTimeoutMs = ms
        }
        if let ms = try r.durationMs("http.idle_timeout") {
            guard ms >= 1000 else { throw ConfigError(key: "http.idle_timeout", problem: "must be at least 1s") }
            idleTimeoutMs = ms
        }
        if let ms = try r.durationMs("http.drain_period") {
            guard ms <= 600_000 else { throw ConfigError(key: "http.drain_period", problem: "must be at most 10m") }
            drainPeriodMs = ms
        }
        if let v = try r.int("http.max_connections_per_address", range: 0...1_000_000) { maxConnectionsPerAddress = v }
        if let proxies = try Self.trustedProxies(reading: r) { trustedProxies = proxies }
    }

    /// Reads `http.trusted_proxies`: a list of addresses or CIDR networks (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`), or
    /// one string of them separated by commas (as `PUSHRELAY_HTTP_TRUSTED_PROXIES` gives it). Nil when not set.
    private static func trustedProxies(reading r: ConfigTreeReader) throws -> TrustedProxies? {
        let key = "http.trusted_proxies"
        guard let value = r.value(key) else { return nil }
        let entries: [String]
        switch value {
        case .null:
            entries = []
        case .string(let s):
            entries = s.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .array(let list):
            entries = try list.enumerated().map { k, v in
                guard case .string(let s) = v else {
                    throw ConfigError(key: "\(key)[\(k)]", problem: "must be an address or a network in CIDR form, such as 10.0.0.0/8")
                }
                return s.trimmingCharacters(in: .whitespaces)
            }
        default:
            throw ConfigError(key: key, problem: "must be a list of addresses or networks in CIDR form")
        }
        switch OutboundAddressPolicy.networks(entries) {
        case .success(let networks):
            return TrustedProxies(networks: networks)
        case .failure(let e):
            throw ConfigError(
                key: "\(key)[\(e.index)]",
                problem: "must be an address or a network in CIDR form, such as 127.0.0.1 or 10.0.0.0/8; got '\(e.text)'"
            )
        }
    }
}
