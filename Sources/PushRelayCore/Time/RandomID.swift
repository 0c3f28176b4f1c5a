#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Random identifiers without Foundation's `UUID()`, which on Linux opens and reads `/dev/urandom` for every id
/// (a measurable share of a request's CPU). The bytes come from the kernel's generator, read 4 KiB at a time from a
/// `/dev/urandom` descriptor kept open. (`SystemRandomNumberGenerator` makes one `getrandom` call per 8 bytes: two
/// system calls per id.)
public enum RandomID {
    /// A random (version 4) UUID in lowercase canonical form, e.g. `3f0c6a1e-8d2b-4c4e-9a57-0b1e2d3c4f5a`.
    public static func uuid() -> String {
        var g = RandomPool.Generator()
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

/// Operating-system randomness fetched in blocks and handed out under a lock.
final class RandomPool: Sendable {
    static let shared = RandomPool()
    private static let blockSize = 4096
    private let state = Locked<(bytes: [UInt8], next: Int)>(([UInt8](repeating: 0, count: RandomPool.blockSize), RandomPool.blockSize))

    /// Draws from the shared pool, 8 bytes per `next()`.
    struct Generator: RandomNumberGenerator {
        mutating func next() -> UInt64 { RandomPool.shared.next() }
    }

    func next() -> UInt64 {
        state.withLock { s in
            if s.next + 8 > s.bytes.count {
                Self.fill(&s.bytes)
                s.next = 0
            }
            let value = s.bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: s.next, as: UInt64.self) }
            s.next += 8
            return value
        }
    }

    /// `/dev/urandom`, opened once (the Swift `Glibc` module does not expose `getrandom`); -1 if it cannot be opened.
    private static let urandom: Int32 = {
        #if canImport(Glibc)
        return open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        #else
        return -1
        #endif
    }()

    private static func fill(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            #if canImport(Glibc)
            var done = 0
            while urandom >= 0 && done < buffer.count {
                let n = read(urandom, buffer.baseAddress! + done, buffer.count - done)
                if n > 0 {
                    done += n
                } else if n == 0 || errno != EINTR {
                    break
                }
            }
            // Only if /dev/urandom is unusable: the standard library's generator, one call per word.
            var g = SystemRandomNumberGenerator()
            done -= done % 8
            while done + 8 <= buffer.count {
                buffer.storeBytes(of: g.next() as UInt64, toByteOffset: done, as: UInt64.self)
                done += 8
            }
            #else
            arc4random_buf(buffer.baseAddress!, buffer.count)
            #endif
        }
    }
}
