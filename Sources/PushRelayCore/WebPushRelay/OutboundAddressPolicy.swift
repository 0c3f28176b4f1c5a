/// Which IP addresses PushRelay may open a connection to when a caller chose the URL: a WebPush subscription's
/// endpoint (the Matrix WebPush pusher) or a WebPush sender's `Unsubscribe-URL`.
///
/// Only public unicast addresses are allowed by default. Loopback, private (RFC 1918, `fc00::/7`), link-local
/// (`169.254.0.0/16`, `fe80::/10`), unspecified, multicast, carrier-grade NAT (`100.64.0.0/10`) and reserved
/// addresses are refused, so a caller cannot make PushRelay reach the machine itself or the network behind it (SSRF).
/// IPv4-mapped, IPv4-compatible and NAT64 (`64:ff9b::/96`) IPv6 addresses are judged by the IPv4 address they carry.
/// `allowedNetworks` (from config) lets the operator open chosen networks, for example a push service on the LAN.
///
/// Pure: it judges addresses. Resolving a host name, and checking *every* address it resolves to, is the caller's job
/// (`OutboundAddressGuard` in PushRelayProviders).
public struct OutboundAddressPolicy: Sendable, Equatable {
    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        public let bytes: [UInt8]

        /// nil unless `bytes` has 4 or 16 elements.
        public init?(bytes: [UInt8]) {
            guard bytes.count == 4 || bytes.count == 16 else { return nil }
            self.bytes = bytes
        }

        /// Parses `192.0.2.1`, `2001:db8::1`, `::ffff:192.0.2.1`, with or without `[…]` and a `%zone`. nil for
        /// anything else (host names included).
        public init?(_ text: String) {
            var t = Substring(text)
            if t.hasPrefix("["), t.hasSuffix("]") { t = t.dropFirst().dropLast() }
            if let percent = t.firstIndex(of: "%") { t = t[..<percent] }
            if let v4 = Self.parseIPv4(t) {
                bytes = v4
            } else if let v6 = Self.parseIPv6(t) {
                bytes = v6
            } else {
                return nil
            }
        }

        public var isIPv4: Bool { bytes.count == 4 }

        /// The IPv4 address an IPv6 address carries (`::ffff:a.b.c.d`, `::a.b.c.d`, `64:ff9b::a.b.c.d`), if any.
        public var embeddedIPv4: Address? {
            guard bytes.count == 16 else { return nil }
            let head = bytes[0..<12]
            let mapped = head.elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])
            let compatible = head.allSatisfy { $0 == 0 } && !bytes[12..<16].allSatisfy { $0 == 0 } && bytes[12..<16] != [0, 0, 0, 1]
            let nat64 = head.elementsEqual([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])
            guard mapped || compatible || nat64 else { return nil }
            return Address(bytes: Array(bytes[12..<16]))
        }

        public var description: String {
            if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
            var groups: [UInt16] = []
            for i in stride(from: 0, to: 16, by: 2) { groups.append(UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])) }
            // The longest run of two or more zero groups becomes "::" (RFC 5952).
            var best: Range<Int>? = nil
            var i = 0
            while i < 8 {
                guard groups[i] == 0 else {
                    i += 1
                    continue
                }
                var j = i
                while j < 8, groups[j] == 0 { j += 1 }
                if j - i >= 2, j - i > (best?.count ?? 0) { best = i..<j }
                i = j
            }
            let hex = groups.map { String($0, radix: 16) }
            guard let best else { return hex.joined(separator: ":") }
            return hex[..<best.lowerBound].joined(separator: ":") + "::" + hex[best.upperBound...].joined(separator: ":")
        }

        private static func parseIPv4(_ t: Substring) -> [UInt8]? {
            let parts = t.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var out: [UInt8] = []
            for p in parts {
                // Decimal only, no leading zeros: "010" is octal to some resolvers, so it is not accepted at all.
                guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }), p == "0" || !p.hasPrefix("0"),
                    let v = UInt8(p)
                else { return nil }
                out.append(v)
            }
            return out
        }

        private static func parseIPv6(_ t: Substring) -> [UInt8]? {
            guard t.contains(":"), t.utf8.count <= 45 else { return nil }
            let halves = t.components(separatedBy: "::")
            guard halves.count <= 2 else { return nil }
            func groups(_ s: String, allowIPv4Tail: Bool) -> [UInt8]? {
                guard !s.isEmpty else { return [] }
                let parts = s.split(separator: ":", omittingEmptySubsequences: false)
                var out: [UInt8] = []
                for (k, p) in parts.enumerated() {
                    if k == parts.count - 1, allowIPv4Tail, p.contains("."), let v4 = parseIPv4(p) {
                        out += v4
                    } else {
                        guard (1...4).contains(p.count), p.allSatisfy(\.isHexDigit), let v = UInt16(p, radix: 16) else { return nil }
                        out += [UInt8(v >> 8), UInt8(v & 0xff)]
                    }
                }
                return out
            }
            if halves.count == 1 {
                guard let all = groups(halves[0], allowIPv4Tail: true), all.count == 16 else { return nil }
                return all
            }
            guard let head = groups(halves[0], allowIPv4Tail: false), let tail = groups(halves[1], allowIPv4Tail: true),
                head.count + tail.count <= 14
            else { return nil }
            return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
        }
    }

    /// An address range in CIDR notation: `10.0.0.0/8`, `fd00::/8`, or one address (`127.0.0.1` = `/32`).
    public struct Network: Sendable, Hashable, CustomStringConvertible {
        public let address: Address
        public let prefixLength: Int

        /// nil unless `cidr` is an address, optionally followed by `/N` with N within the address's bits.
        public init?(cidr: String) {
            let parts = cidr.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = Address(String(parts[0])) else { return nil }
            let bits = address.bytes.count * 8
            var length = bits
            if parts.count == 2 {
                guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(parts[1]), (0...bits).contains(n) else { return nil }
                length = n
            }
            self.init(address, prefixLength: length)
        }

        init(_ address: Address, prefixLength: Int) {
            self.address = address
            self.prefixLength = prefixLength
        }

        init(_ cidr: StaticString) { self.init(cidr: "\(cidr)")! }

        /// Whether `candidate` lies in this network (an IPv4 network never contains an IPv6 address, and the reverse).
        public func contains(_ candidate: Address) -> Bool {
            guard candidate.bytes.count == address.bytes.count else { return false }
            var remaining = prefixLength
            for (a, b) in zip(address.bytes, candidate.bytes) {
                guard remaining > 0 else { return true }
                let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
                if a & mask != b & mask { return false }
                remaining -= 8
            }
            return true
        }

        public var description: String { "\(address)/\(prefixLength)" }
    }

    /// Why an address is not public.
    public enum Category: String, Sendable, Equatable {
        case loopback
        case privateNetwork = "private"
        case linkLocal = "link-local"
        case unspecified
        case multicast
        case sharedAddressSpace = "carrier-grade NAT"
        case reserved
    }

    /// The answer for one address, or for every address of a host.
    public enum Verdict: Sendable, Equatable {
        case allowed
        /// The first address that may not be contacted, and why.
        case refused(Address, Category)
    }

    /// Networks the operator opened (`allowed_private_networks`); empty by default.
    public var allowedNetworks: [Network]

    public init(allowedNetworks: [Network] = []) {
        self.allowedNetworks = allowedNetworks
    }

    /// Parses a config list of CIDR strings; the error names the first entry that is not one.
    public static func networks(_ list: [String]) -> Result<[Network], NetworkParseError> {
        var out: [Network] = []
        for (k, s) in list.enumerated() {
            guard let n = Network(cidr: s) else { return .failure(NetworkParseError(index: k, text: s)) }
            out.append(n)
        }
        return .success(out)
    }

    public struct NetworkParseError: Error, Sendable, Equatable {
        public var index: Int
        public var text: String

        public init(index: Int, text: String) {
            self.index = index
            self.text = text
        }
    }

    /// `allowed` for a public address or one inside `allowedNetworks`; `refused` with the reason otherwise.
    public func check(_ address: Address) -> Verdict {
        guard let category = Self.category(of: address) else { return .allowed }
        if allowedNetworks.contains(where: { $0.contains(address) || (address.embeddedIPv4.map($0.contains) ?? false) }) { return .allowed }
        return .refused(address, category)
    }

    /// `allowed` only when every address is (a host is refused if any of its addresses is: the connection could
    /// go to any of them). No address at all is refused as unspecified.
    public func check(_ addresses: [Address]) -> Verdict {
        guard !addresses.isEmpty else { return .refused(Address(bytes: [0, 0, 0, 0])!, .unspecified) }
        for a in addresses {
            let verdict = check(a)
            if verdict != .allowed { return verdict }
        }
        return .allowed
    }

    /// nil for a public unicast address; otherwise the kind of address it is.
    public static func category(of address: Address) -> Category? {
        if let v4 = address.embeddedIPv4 { return category(of: v4) }
        let table = address.isIPv4 ? Self.ipv4Ranges : Self.ipv6Ranges
        return table.first { $0.network.contains(address) }?.category
    }

    private static let ipv4Ranges: [(network: Network, category: Category)] = [
        (Network("0.0.0.0/8"), .unspecified),
        (Network("127.0.0.0/8"), .loopback),
        (Network("10.0.0.0/8"), .privateNetwork),
        (Network("172.16.0.0/12"), .privateNetwork),
        (Network("192.168.0.0/16"), .privateNetwork),
        (Network("169.254.0.0/16"), .linkLocal),
        (Network("100.64.0.0/10"), .sharedAddressSpace),
        (Network("192.0.0.0/24"), .reserved),
        (Network("198.18.0.0/15"), .reserved),
        (Network("224.0.0.0/4"), .multicast),
        (Network("240.0.0.0/4"), .reserved),  // and 255.255.255.255, the broadcast address
    ]

    private static let ipv6Ranges: [(network: Network, category: Category)] = [
        (Network("::/128"), .unspecified),
        (Network("::1/128"), .loopback),
        (Network("fc00::/7"), .privateNetwork),
        (Network("fe80::/10"), .linkLocal),
        (Network("fec0::/10"), .privateNetwork),  // the deprecated site-local range
        (Network("ff00::/8"), .multicast),
        (Network("100::/64"), .reserved),  // discard-only
    ]
}
