/// The "extended Z85" text encoding toot-relay uses to carry binary WebPush data inside APNs/FCM JSON.
///
/// Whole 4-byte blocks are standard ZeroMQ Z85: a big-endian `UInt32` written as 5 base-85 digits, most significant
/// first. A trailing block of n = 1…3 bytes is read as a big-endian n-byte integer and written as n + 1 digits, so no
/// padding is ever added: the encoded length is `5·⌊L/4⌋ + (L mod 4 == 0 ? 0 : L mod 4 + 1)`.
///
/// The decoder matches toot-relay's iOS `Decode85.swift`: characters outside the alphabet are skipped, every 5 digits
/// give 4 bytes, and m = 2…4 leftover digits give the low m − 1 bytes of their value (1 leftover digit gives nothing).
public enum ExtendedZ85 {
    /// The ZeroMQ Z85 alphabet; a character's index is its digit value.
    public static let alphabet: [UInt8] = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// Digit value of each ASCII byte, or -1 for bytes outside the alphabet.
    private static let digits: [Int16] = {
        var table = [Int16](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int16(i) }
        return table
    }()

    /// Number of characters `encode` produces for `byteCount` bytes.
    public static func encodedLength(byteCount: Int) -> Int {
        let rest = byteCount % 4
        return 5 * (byteCount / 4) + (rest == 0 ? 0 : rest + 1)
    }

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(encodedLength(byteCount: input.count))
        var i = 0
        while i < input.count {
            let n = min(4, input.count - i)
            var value: UInt64 = 0
            for k in 0..<n { value = value << 8 | UInt64(input[i + k]) }
            let digitCount = n == 4 ? 5 : n + 1
            var chunk = [UInt8](repeating: 0, count: digitCount)
            for d in stride(from: digitCount - 1, through: 0, by: -1) {
                chunk[d] = alphabet[Int(value % 85)]
                value /= 85
            }
            out.append(contentsOf: chunk)
            i += n
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 4 / 5 + 3)
        var value: UInt64 = 0
        var count = 0
        for c in text.utf8 {
            let d = digits[Int(c)]
            guard d >= 0 else { continue }
            value = value &* 85 &+ UInt64(d)
            count += 1
            if count == 5 {
                for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
                value = 0
                count = 0
            }
        }
        if count >= 2 {
            let n = count - 1
            for k in stride(from: n - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * k))) }
        }
        return out
    }
}
