/// The reverse proxies whose forwarding headers PushRelay believes (`http.trusted_proxies`), and the client address a
/// request stands for.
///
/// Only a connection from a trusted proxy has its `X-Forwarded-For` (or, without it, `Forwarded`) read: from anyone
/// else those headers are ignored, so a stranger cannot choose the address its failed credential checks are counted
/// against. Through trusted proxies the client is the right-most address that is not itself a trusted proxy: each
/// proxy appends the address it got the request from, and only what trusted proxies appended can be believed.
///
/// Pure: it reads header values, not sockets.
public struct TrustedProxies: Sendable, Equatable {
    /// The forwarding headers read from a trusted proxy: `X-Forwarded-For` first, `Forwarded` (RFC 7239) without it.
    public static let forwardedForHeader = "X-Forwarded-For"
    public static let forwardedHeader = "Forwarded"

    public let networks: [OutboundAddressPolicy.Network]

    public init(networks: [OutboundAddressPolicy.Network] = []) {
        self.networks = networks
    }

    /// No proxy is trusted: every request is its connection's peer.
    public var isEmpty: Bool { networks.isEmpty }

    /// Whether `address` (an IP address, as a socket reports it) is a trusted proxy.
    public func trusts(_ address: String) -> Bool {
        guard !networks.isEmpty, let a = OutboundAddressPolicy.Address(address) else { return false }
        let v4 = a.embeddedIPv4
        return networks.contains { $0.contains(a) || (v4.map($0.contains) ?? false) }
    }

    /// The client address of a request from `peer` carrying these `X-Forwarded-For` and `Forwarded` header values
    /// (every line of each, in order). `peer` unless it is a trusted proxy; then the right-most forwarded address that
    /// is not a trusted proxy, or the left-most one when all are; `unknown` when that hop is not an IP address (a
    /// proxy that hides it); `peer` when the request carries neither header.
    public func clientAddress(peer: String, forwardedFor: [String], forwarded: [String]) -> String {
        guard trusts(peer) else { return peer }
        var hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { Self.trimmed($0) }
        if hops.isEmpty { hops = forwarded.flatMap(Self.forwardedFor) }
        hops.removeAll { $0.isEmpty }
        guard !hops.isEmpty else { return peer }
        for hop in hops.reversed() {
            guard let address = Self.address(hop) else { return "unknown" }
            if !trusts(address) { return address }
        }
        return Self.address(hops[0]) ?? "unknown"
    }

    /// The `for=` values of one `Forwarded` header line (RFC 7239), in order.
    static func forwardedFor(_ line: String) -> [String] {
        line.split(separator: ",").compactMap { element in
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, trimmed(parts[0]).lowercased() == "for" else { continue }
                var value = trimmed(parts[1])
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                return value
            }
            return nil
        }
    }

    /// A hop as an address string without its port (`192.0.2.1:4711`, `[2001:db8::1]:4711`), or nil if it is none.
    static func address(_ hop: String) -> String? {
        var text = Substring(hop)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]
        }
        return OutboundAddressPolicy.Address(String(text)).map(\.description)
    }

    private static func trimmed(_ s: Substring) -> String {
        String(s.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
