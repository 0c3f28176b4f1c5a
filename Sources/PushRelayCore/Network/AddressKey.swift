/// The key a client address counts under in every per-address bound: failed credential checks, channels, connections,
/// the WebPush relay's senders and the dispatcher's waiting lines.
///
/// An IPv6 client counts by its /64 (one subscriber's network: whoever has one address of it usually has all of
/// them), an IPv4 client by its address. Pure.
public enum AddressKey {
    /// The budget `address` counts in: an IPv6 address's /64 (`2001:db8:1:2::/64`), an IPv4 address as it is
    /// (`192.0.2.1`), an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as the IPv4 address it carries. Brackets and a
    /// `%zone` are ignored. Anything that is not an IP address (a Unix socket's peer, say) counts by its own text.
    public static func key(for address: String) -> String {
        guard let parsed = OutboundAddressPolicy.Address(address) else { return address }
        if parsed.isIPv4 { return parsed.description }
        if parsed.bytes[0..<12].elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]),
            let v4 = OutboundAddressPolicy.Address(bytes: Array(parsed.bytes[12..<16]))
        {
            return v4.description
        }
        let prefix = OutboundAddressPolicy.Address(bytes: Array(parsed.bytes[0..<8]) + [UInt8](repeating: 0, count: 8))
        return (prefix ?? parsed).description + "/64"
    }
}
