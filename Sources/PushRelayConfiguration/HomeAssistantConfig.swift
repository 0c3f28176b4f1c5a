import Foundation
import PushRelayCore

extension PushRelayConfig {
    /// `home_assistant:`: who may use Home Assistant's routes (the notify POSTs and `checkRateLimits`). Both empty (the
    /// default): everyone, as with the official relay.
    public struct HomeAssistant: Sendable {
        public init() {}
        /// `home_assistant.keys`: a request must carry one of these as `?key=…` in its URL (put it in the push URL the
        /// app registers). Empty: no key is asked for.
        public var keys: [String] = []
        /// `home_assistant.allowed_networks`: a request's client must be in one of these networks (addresses or CIDR).
        /// Empty: any address.
        public var allowedNetworks: [OutboundAddressPolicy.Network] = []
    }

    static let homeAssistantKeys: [ConfigKey] = ["keys", "allowed_networks"]
}

extension PushRelayConfig.HomeAssistant {
    /// The shortest key taken: a key is a secret, and a short one is guessed.
    static let minimumKeyLength = 16

    /// Reads `home_assistant.*` over the defaults. Each key or network may be given as a list, or as one string of them
    /// separated by commas (as `PUSHRELAY_HOME_ASSISTANT_KEYS` gives it).
    package init(reading r: ConfigTreeReader) throws {
        self.init()
        keys = try Self.list(reading: r, "home_assistant.keys", expecting: "a string of at least \(Self.minimumKeyLength) characters")
        for (i, key) in keys.enumerated() {
            guard key.count >= Self.minimumKeyLength, key.unicodeScalars.allSatisfy(Self.isURLSafe) else {
                throw ConfigError(
                    key: "home_assistant.keys[\(i)]",
                    problem:
                        "must be at least \(Self.minimumKeyLength) characters, each a letter, a digit, '-', '.', '_' or '~' (it goes into a URL as it is); `openssl rand -hex 32` makes one"
                )
            }
        }
        let networks = try Self.list(reading: r, "home_assistant.allowed_networks", expecting: "an address or a network in CIDR form")
        switch OutboundAddressPolicy.networks(networks) {
        case .success(let parsed):
            allowedNetworks = parsed
        case .failure(let e):
            throw ConfigError(
                key: "home_assistant.allowed_networks[\(e.index)]",
                problem: "must be an address or a network in CIDR form, such as 192.168.1.10 or 192.168.1.0/24; got '\(e.text)'"
            )
        }
    }

    /// RFC 3986's unreserved characters: they stand in a query as they are.
    private static func isURLSafe(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (CharacterSet.alphanumerics.contains(c) || "-._~".unicodeScalars.contains(c))
    }

    private static func list(reading r: ConfigTreeReader, _ key: String, expecting: String) throws -> [String] {
        guard let value = r.value(key) else { return [] }
        switch value {
        case .null:
            return []
        case .string(let s):
            return s.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .array(let list):
            return try list.enumerated().map { k, v in
                guard case .string(let s) = v else { throw ConfigError(key: "\(key)[\(k)]", problem: "must be \(expecting)") }
                return s.trimmingCharacters(in: .whitespaces)
            }
        default:
            throw ConfigError(key: key, problem: "must be a list (of \(expecting) each)")
        }
    }
}
