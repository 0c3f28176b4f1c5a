import Crypto
import Foundation
import PushRelayCore

/// Encrypts a payload for one device registered with `POST /api/v1/devices`, with the key it was given there: zlib
/// (stored blocks, see `ZlibStored`), then AES-256-GCM with the device's 32-byte key and a fresh random 12-byte nonce,
/// no associated data. Returns base64 ciphertext, nonce (`iv`) and tag. Call invites (`CallService`) and Home
/// Assistant's `encrypt_payloads` notifications (`PayloadSealer`) are sealed with it.
package enum DeviceCipher {
    package struct Sealed: Sendable {
        package var ciphertext: String
        package var iv: String
        package var tag: String
    }

    package static func seal(_ plaintext: [UInt8], key: [UInt8]) throws -> Sealed {
        let compressed = ZlibStored.compress(plaintext)
        let box = try AES.GCM.seal(compressed, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce())
        return Sealed(
            ciphertext: Data(box.ciphertext).base64EncodedString(),
            iv: Data(box.nonce).base64EncodedString(),
            tag: Data(box.tag).base64EncodedString()
        )
    }

    /// 32 random bytes from the system's secure generator.
    package static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }
}
