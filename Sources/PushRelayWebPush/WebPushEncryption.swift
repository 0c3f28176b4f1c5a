import Crypto
import Foundation

/// RFC 8291 message encryption for WebPush, `aes128gcm` content coding (RFC 8188), as one record.
///
/// The body is `salt(16) ‖ rs(4, big-endian) ‖ idlen(1) = 65 ‖ keyid = the sender's ephemeral P-256 public key ‖
/// AES-128-GCM(plaintext ‖ 0x02 ‖ zero padding)`, with the key and nonce derived from ECDH with the subscription's
/// `p256dh` key and its `auth` secret (HKDF-SHA-256).
public enum WebPushEncryption {
    /// The record size PushRelay writes (the RFC's example uses it too). One record holds any message up to 4 KiB.
    public static let recordSize: UInt32 = 4096
    /// Header bytes: salt, record size, key-id length and a 65-byte uncompressed P-256 key.
    public static let headerLength = 16 + 4 + 1 + 65
    /// AES-GCM tag plus the padding delimiter.
    public static let overhead = headerLength + 16 + 1

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// `p256dh` is not an uncompressed P-256 public key.
        case badSubscriptionKey
        /// `auth` is not 16 bytes.
        case badAuthSecret
        /// The plaintext does not fit one record.
        case tooLarge(bytes: Int, limit: Int)
        /// The message is not a well-formed `aes128gcm` body, or does not decrypt with these keys.
        case undecryptable(String)

        public var description: String {
            switch self {
            case .badSubscriptionKey: return "the subscription's p256dh is not an uncompressed P-256 public key (65 bytes, base64url)"
            case .badAuthSecret: return "the subscription's auth secret is not 16 bytes (base64url)"
            case .tooLarge(let n, let limit): return "the message is \(n) bytes; at most \(limit) fit one aes128gcm record"
            case .undecryptable(let why): return "cannot decrypt the message: \(why)"
            }
        }
    }

    /// Encrypts `plaintext` to a subscription. `senderKey` and `salt` are random unless given (tests).
    public static func encrypt(
        _ plaintext: [UInt8],
        p256dh: [UInt8],
        auth: [UInt8],
        senderKey: P256.KeyAgreement.PrivateKey = ephemeralKey(),
        salt: [UInt8]? = nil,
        padding: Int = 0
    ) throws(Failure) -> [UInt8] {
        let receiver: P256.KeyAgreement.PublicKey
        do {
            receiver = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        } catch {
            throw .badSubscriptionKey
        }
        guard p256dh.count == 65 else { throw .badSubscriptionKey }
        guard auth.count == 16 else { throw .badAuthSecret }
        let limit = Int(recordSize) - 16 - 1
        guard plaintext.count + padding <= limit else { throw .tooLarge(bytes: plaintext.count + padding, limit: limit) }
        let salt = salt ?? randomBytes(16)
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        let shared: SharedSecret
        do {
            shared = try senderKey.sharedSecretFromKeyAgreement(with: receiver)
        } catch {
            throw .badSubscriptionKey
        }
        let (key, nonce) = deriveKeyAndNonce(shared: shared, auth: auth, salt: salt, receiverPublic: p256dh, senderPublic: senderPublic)
        var record = plaintext
        record.append(0x02)
        record.append(contentsOf: [UInt8](repeating: 0, count: padding))
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(record, using: key, nonce: nonce)
        } catch {
            throw .undecryptable("AES-GCM failed: \(error)")
        }
        var out: [UInt8] = salt
        out.reserveCapacity(headerLength + record.count + 16)
        withUnsafeBytes(of: recordSize.bigEndian) { out.append(contentsOf: $0) }
        out.append(UInt8(senderPublic.count))
        out.append(contentsOf: senderPublic)
        out.append(contentsOf: sealed.ciphertext)
        out.append(contentsOf: sealed.tag)
        return out
    }

    /// Decrypts an `aes128gcm` body with the subscription's private key and auth secret (the browser's side; used by
    /// the fake push service and tests). Handles one or more records.
    public static func decrypt(_ body: [UInt8], receiverKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]) throws(Failure) -> [UInt8] {
        guard body.count > 21 else { throw .undecryptable("shorter than the header") }
        let salt = Array(body[0..<16])
        let rs = Int(UInt32(body[16]) << 24 | UInt32(body[17]) << 16 | UInt32(body[18]) << 8 | UInt32(body[19]))
        let idlen = Int(body[20])
        guard rs >= 18, body.count >= 21 + idlen else { throw .undecryptable("bad header") }
        let keyID = Array(body[21..<21 + idlen])
        let sender: P256.KeyAgreement.PublicKey
        do {
            sender = try P256.KeyAgreement.PublicKey(x963Representation: keyID)
        } catch {
            throw .undecryptable("the key id is not a P-256 public key")
        }
        let shared: SharedSecret
        do {
            shared = try receiverKey.sharedSecretFromKeyAgreement(with: sender)
        } catch {
            throw .undecryptable("ECDH failed")
        }
        let receiverPublic = Array(receiverKey.publicKey.x963Representation)
        let (key, baseNonce) = deriveKeyAndNonce(shared: shared, auth: auth, salt: salt, receiverPublic: receiverPublic, senderPublic: keyID)
        var records: [[UInt8]] = []
        var offset = 21 + idlen
        while offset < body.count {
            let end = min(offset + rs, body.count)
            records.append(Array(body[offset..<end]))
            offset = end
        }
        guard !records.isEmpty else { throw .undecryptable("no records") }
        var plaintext: [UInt8] = []
        for (seq, record) in records.enumerated() {
            guard record.count > 16 else { throw .undecryptable("record \(seq) is shorter than its tag") }
            var nonceBytes = Array(baseNonce)
            var counter = UInt64(seq).bigEndian
            withUnsafeBytes(of: &counter) { c in for i in 0..<8 { nonceBytes[4 + i] ^= c[i] } }
            let opened: Data
            do {
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonceBytes), ciphertext: record.dropLast(16), tag: record.suffix(16))
                opened = try AES.GCM.open(box, using: key)
            } catch {
                throw .undecryptable("record \(seq) fails authentication (wrong keys or a corrupted body)")
            }
            var bytes = Array(opened)
            while let last = bytes.last, last == 0 { bytes.removeLast() }
            let isLast = seq == records.count - 1
            guard let delimiter = bytes.popLast(), delimiter == (isLast ? 0x02 : 0x01) else {
                throw .undecryptable("record \(seq) has no valid padding delimiter")
            }
            plaintext += bytes
        }
        return plaintext
    }

    /// RFC 8291 §3.3–3.4 and RFC 8188 §2.2: IKM from ECDH and `auth`, then the content-encryption key and nonce.
    static func deriveKeyAndNonce(
        shared: SharedSecret,
        auth: [UInt8],
        salt: [UInt8],
        receiverPublic: [UInt8],
        senderPublic: [UInt8]
    ) -> (SymmetricKey, AES.GCM.Nonce) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // 12 bytes always make a valid nonce.
        let n = nonce.withUnsafeBytes { try! AES.GCM.Nonce(data: Array($0)) }
        return (cek, n)
    }

    /// A fresh P-256 key for one message: a scalar from the system's secure generator, drawn again in the rare case
    /// (about 2^-32) that it is not in [1, n - 1]. swift-crypto's own generator also checks each key by an ECDSA
    /// signature and its verification (the FIPS pairwise test) and keeps only keys with a compact form, which more
    /// than doubles the cost of a key that is used for one ECDH and sent uncompressed.
    public static func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: randomBytes(32)) { return key }
        }
    }

    /// `n` random bytes, eight from each draw of the system's generator.
    static func randomBytes(_ n: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        var out = [UInt8]()
        out.reserveCapacity(n + 7)
        while out.count < n { withUnsafeBytes(of: g.next() as UInt64) { out.append(contentsOf: $0) } }
        out.removeLast(out.count - n)
        return out
    }
}
