/// Base64 decoding that accepts both alphabets (`+/` and `-_`) with or without `=` padding, as WebPush header
/// parameters are written either way in the wild.
public enum Base64Lenient {
    private static let values: [Int8] = {
        var t = [Int8](repeating: -1, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() { t[Int(c)] = Int8(i) }
        t[Int(UInt8(ascii: "+"))] = 62
        t[Int(UInt8(ascii: "-"))] = 62
        t[Int(UInt8(ascii: "/"))] = 63
        t[Int(UInt8(ascii: "_"))] = 63
        return t
    }()

    /// The bytes, or nil for characters outside both alphabets, padding in the middle, or an impossible length.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var body = Array(text.utf8)
        while body.last == UInt8(ascii: "=") { body.removeLast() }
        guard body.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in body {
            let v = values[Int(c)]
            guard v >= 0 else { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }

    /// Standard base64 with padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i < input.count {
            let n = min(3, input.count - i)
            var v = UInt32(input[i]) << 16
            if n > 1 { v |= UInt32(input[i + 1]) << 8 }
            if n > 2 { v |= UInt32(input[i + 2]) }
            out.append(table[Int(v >> 18 & 63)])
            out.append(table[Int(v >> 12 & 63)])
            out.append(n > 1 ? table[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            out.append(n > 2 ? table[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
