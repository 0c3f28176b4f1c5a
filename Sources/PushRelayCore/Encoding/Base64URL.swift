import Foundation

/// Base64url without padding (RFC 4648 §5), as WebPush and JWTs use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// The 6-bit value of each byte of either alphabet (`-` and `+` are 62, `_` and `/` 63); 0xFF for anything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    public static func encode<S: Sequence<UInt8>>(_ bytes: S) -> String {
        let input = Array(bytes)
        let count = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: count) { out in
            var o = 0
            var i = 0
            while i + 3 <= input.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                out[o + 3] = alphabet[Int(v & 63)]
                i += 3
                o += 4
            }
            let rest = input.count - i
            if rest > 0 {
                let v = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                o += 2
                if rest == 2 {
                    out[o] = alphabet[Int(v >> 6 & 63)]
                    o += 1
                }
            }
            return o
        }
    }

    /// Decodes base64url or standard base64, padded or not; nil for anything else.
    public static func decode(_ s: String) -> [UInt8]? {
        if let bytes = decodePlain(s) { return bytes }
        var t = s.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.hasSuffix("=") { t.removeLast() }
        switch t.count % 4 {
        case 1: return nil
        case 2: t += "=="
        case 3: t += "="
        default: break
        }
        return Data(base64Encoded: t).map(Array.init)
    }

    /// The common case without Foundation: only alphabet characters, then any `=`, and zero unused bits at the end.
    /// Nil for anything else, which `decode` then reads the general way.
    private static func decodePlain(_ s: String) -> [UInt8]? {
        var utf8 = Array(s.utf8)
        while utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
        let rest = utf8.count % 4
        guard rest != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count * 3 / 4)
        var i = 0
        while i + 4 <= utf8.count {
            let a = values[Int(utf8[i])]
            let b = values[Int(utf8[i + 1])]
            let c = values[Int(utf8[i + 2])]
            let d = values[Int(utf8[i + 3])]
            // 0xFF (not in either alphabet) is the only value with the top bits set.
            guard (a | b | c | d) & 0xC0 == 0 else { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            out.append(UInt8(v >> 16))
            out.append(UInt8(v >> 8 & 0xFF))
            out.append(UInt8(v & 0xFF))
            i += 4
        }
        if rest > 0 {
            let a = values[Int(utf8[i])]
            let b = values[Int(utf8[i + 1])]
            let c = rest == 3 ? values[Int(utf8[i + 2])] : 0
            guard (a | b | c) & 0xC0 == 0 else { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
            // Bits past the last byte must be zero (Foundation decides what else means).
            guard v & (rest == 2 ? 0xFFFF : 0xFF) == 0 else { return nil }
            out.append(UInt8(v >> 16))
            if rest == 3 { out.append(UInt8(v >> 8 & 0xFF)) }
        }
        return out
    }
}
