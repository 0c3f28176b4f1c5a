import Crypto
import PushRelayWebPush

/// An aes128gcm body (RFC 8188 header and records) opened with a fixed receiver key: every malformed header, record
/// size or padding is an error, never a crash.
enum WebPushBodyFuzzing {
    static let receiver = try! P256.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32))
    static let auth = [UInt8](repeating: 9, count: 16)

    static func run(_ bytes: [UInt8]) {
        _ = try? WebPushEncryption.decrypt(bytes, receiverKey: receiver, auth: auth)
    }
}
