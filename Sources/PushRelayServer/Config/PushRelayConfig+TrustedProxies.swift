import Foundation
import PushRelayCore

extension PushRelayConfig {
    /// Reads `http.trusted_proxies`: a list of addresses or CIDR networks (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`), or
    /// one string of them separated by commas (as `PUSHRELAY_HTTP_TRUSTED_PROXIES` gives it).
    mutating func readTrustedProxies(_ r: ConfigTreeReader) throws {
        let key = "http.trusted_proxies"
        guard let value = r.value(key) else { return }
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
            http.trustedProxies = TrustedProxies(networks: networks)
        case .failure(let e):
            throw ConfigError(
                key: "\(key)[\(e.index)]",
                problem: "must be an address or a network in CIDR form, such as 127.0.0.1 or 10.0.0.0/8; got '\(e.text)'"
            )
        }
    }
}
