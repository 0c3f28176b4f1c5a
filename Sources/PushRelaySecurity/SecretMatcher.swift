import Crypto
import Foundation

/// Checks a presented credential against a configured secret (the admin token) in constant time.
///
/// Both sides are hashed first (SHA-256), so the comparison always runs over 32 bytes whatever the lengths, and the
/// digests are compared by `constantTimeEquals`, which looks at every byte and branches on none: how long a check
/// takes says nothing about how much of a guess was right. The secret itself is not kept, only its digest.
/// (Channel tokens and API keys are never compared at all: the store looks them up by their SHA-256.)
package struct SecretMatcher: Sendable {
    private let expected: [UInt8]

    package init(secret: String) {
        expected = Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Whether `candidate` is the secret.
    package func matches(_ candidate: some StringProtocol) -> Bool {
        Self.constantTimeEquals(Array(SHA256.hash(data: Data(candidate.utf8))), expected)
    }

    /// Equality that reads every byte of both inputs (the longer length's worth) and accumulates the differences
    /// without branching on them. Returns false for different lengths, after the same amount of work.
    package static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | UInt8(truncatingIfNeeded: (a.count ^ b.count) >> 8)
        let n = max(a.count, b.count)
        for i in 0..<n {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
