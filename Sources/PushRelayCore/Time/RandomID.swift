/// Random identifiers without Foundation's `UUID()`, which on Linux opens and reads `/dev/urandom` for every id
/// (a measurable share of a request's CPU). Uses the system generator (`getrandom`).
public enum RandomID {
    /// A random (version 4) UUID in lowercase canonical form, e.g. `3f0c6a1e-8d2b-4c4e-9a57-0b1e2d3c4f5a`.
    public static func uuid() -> String {
        var g = SystemRandomNumberGenerator()
        return uuid(using: &g)
    }

    /// `uuid()` drawing from `generator` (tests pass a seeded one).
    public static func uuid<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var hi = generator.next() as UInt64
        var lo = generator.next() as UInt64
        hi = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 4122 variant
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var i = 0
        for word in [hi, lo] {
            for shift in stride(from: 60, through: 0, by: -4) {
                if i == 8 || i == 13 || i == 18 || i == 23 { i += 1 }
                out[i] = hex[Int((word >> UInt64(shift)) & 0xF)]
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// 32 lowercase hex digits (a UUID without dashes).
    public static func hex128() -> String {
        String(uuid().filter { $0 != "-" })
    }
}
