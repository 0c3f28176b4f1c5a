/// A zlib stream (RFC 1950) whose DEFLATE data (RFC 1951) is made of "stored" blocks only.
///
/// PushRelay's call invites must be "compressed" with zlib for apps built for the SignalWire payload format. Foundation
/// on Linux has no zlib API and PushRelay adds no C dependency, so it writes uncompressed stored blocks inside a valid
/// zlib stream: every zlib inflater (`zlib.decompress`, `Data.decompressed`, java.util.zip.Inflater, pako…) reads it.
/// The cost is size: the stream is the input plus 6 bytes, plus 5 bytes per 65,535-byte block.
public enum ZlibStored {
    public static func compress(_ input: [UInt8]) -> [UInt8] {
        // CMF 0x78: deflate, 32 KiB window; FLG 0x01: fastest level, no dictionary, (0x78 << 8 | 0x01) % 31 == 0.
        var out: [UInt8] = [0x78, 0x01]
        out.reserveCapacity(input.count + 6 + 5 * (input.count / 65_535 + 1))
        var offset = 0
        repeat {
            let n = min(65_535, input.count - offset)
            let final = offset + n == input.count
            out.append(final ? 1 : 0)  // BFINAL, BTYPE 00 (stored), then padding to the byte boundary
            out.append(UInt8(n & 0xFF))
            out.append(UInt8(n >> 8))
            out.append(UInt8(~n & 0xFF))
            out.append(UInt8((~n >> 8) & 0xFF))
            out.append(contentsOf: input[offset..<(offset + n)])
            offset += n
        } while offset < input.count
        let a = adler32(input)
        out.append(contentsOf: [UInt8(a >> 24), UInt8(a >> 16 & 0xFF), UInt8(a >> 8 & 0xFF), UInt8(a & 0xFF)])
        return out
    }

    /// Adler-32 of `bytes` (RFC 1950 §8).
    public static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}
