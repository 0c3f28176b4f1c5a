import Crypto
import Foundation
import PushRelayCore

/// Encrypts a call invite for one device: zlib (stored blocks, see `ZlibStored`), then AES-256-GCM with the device's
/// 32-byte key and a fresh random 12-byte nonce, no associated data. Returns base64 ciphertext, nonce (`iv`) and tag.
enum CallInviteSealer {
    struct Sealed: Sendable {
        var ciphertext: String
        var iv: String
        var tag: String
    }

    static func seal(_ plaintext: [UInt8], key: [UInt8]) throws -> Sealed {
        let compressed = ZlibStored.compress(plaintext)
        let box = try AES.GCM.seal(compressed, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce())
        return Sealed(
            ciphertext: Data(box.ciphertext).base64EncodedString(),
            iv: Data(box.nonce).base64EncodedString(),
            tag: Data(box.tag).base64EncodedString()
        )
    }

    /// 32 random bytes from the system's secure generator.
    static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }
}
