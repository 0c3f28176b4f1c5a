import ArgumentParser
import Crypto
import Foundation
import PushRelayCore
import PushRelayWebPush

#if canImport(Glibc)
import Glibc
#endif

/// `pushrelay-dev webpush-cost`: what RFC 8291 encryption and a VAPID signature cost alone, in one thread with no
/// server, client or I/O around them: the floor under a Matrix notify → WebPush (`BENCH_WEBPUSH=1 Benchmarks/matrix.sh`).
struct WebPushCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush-cost",
        abstract: "Print the CPU of one WebPush message encryption (RFC 8291) and of one VAPID JWT signature.",
        discussion: """
            Encrypts --messages copies of the message `Benchmarks/matrix.lua` makes (the WebPush translation of a \
            Matrix notify) to one subscription, each with a fresh ephemeral key and salt as `webpush` sends them, \
            then its parts alone (the ephemeral key, ECDH, the key derivation, AES-GCM), then --messages VAPID \
            signatures. Prints microseconds of this process's CPU (user + system) for each.
            """
    )

    @Option(help: "Messages to encrypt (and JWTs to sign).") var messages = 20_000

    func run() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let p256dh = Array(receiver.publicKey.x963Representation)
        let auth = (0..<16).map { UInt8($0) }
        let plaintext = Self.benchMessage(p256dh: p256dh, auth: auth)
        let n = max(messages, 1)

        // Warm up, and check that what is encrypted decrypts.
        let sample = try WebPushEncryption.encrypt(plaintext, p256dh: p256dh, auth: auth)
        guard try WebPushEncryption.decrypt(sample, receiverKey: receiver, auth: auth) == plaintext else {
            throw ValidationError("the encrypted sample does not decrypt to its plaintext")
        }
        var sink = 0
        let whole = try Self.measure(n) { sink &+= try WebPushEncryption.encrypt(plaintext, p256dh: p256dh, auth: auth).count }
        let keys = Self.measure(n) { sink &+= WebPushEncryption.ephemeralKey().publicKey.x963Representation.count }
        let generated = Self.measure(n) { sink &+= P256.KeyAgreement.PrivateKey().publicKey.x963Representation.count }
        let senderKey = P256.KeyAgreement.PrivateKey()
        let receiverKey = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        let parse = try Self.measure(n) { sink &+= try P256.KeyAgreement.PublicKey(x963Representation: p256dh).rawRepresentation.count }
        let ecdh = try Self.measure(n) {
            sink &+= try senderKey.sharedSecretFromKeyAgreement(with: receiverKey).withUnsafeBytes { Int($0[0]) }
        }
        let key = SymmetricKey(size: .bits128)
        let aes = try Self.measure(n) { sink &+= try AES.GCM.seal(plaintext, using: key).tag.count }
        let signer = VAPIDSigner(key: P256.Signing.PrivateKey(), contact: "bench@example.org")
        let vapid = Self.measure(n) { sink &+= signer.token(audience: "https://push.example.org", now: Date()).jwt.utf8.count }
        let base64 = Self.measure(n) { sink &+= Base64URL.decode(Base64URL.encode(p256dh))?.count ?? 0 }

        print("WebPush cost alone (\(n) each, one thread, \(plaintext.count)-byte message; sink \(sink % 10)):")
        print(String(format: "  encrypt (RFC 8291, aes128gcm, one record):  %6.1f us", whole))
        print(String(format: "    of which an ephemeral P-256 key:         %6.1f us", keys))
        print(String(format: "      (swift-crypto's generated key: %6.1f us)", generated))
        print(String(format: "    parsing the subscription's p256dh:       %6.1f us", parse))
        print(String(format: "    ECDH:                                    %6.1f us", ecdh))
        print(String(format: "    AES-128-GCM seal:                        %6.1f us", aes))
        print(String(format: "  VAPID JWT (ES256) signature:               %6.1f us (once per push service and lifetime when reused)", vapid))
        print(String(format: "  base64url encode + decode of a p256dh:     %6.1f us", base64))
    }

    /// The plaintext `webpush` encrypts for a notify of `Benchmarks/matrix.lua`.
    static func benchMessage(p256dh: [UInt8], auth: [UInt8]) -> [UInt8] {
        let n = MatrixNotification(
            eventID: "$bench-0-1",
            roomID: "!room:example.org",
            type: "m.room.message",
            sender: "@alice:example.org",
            senderDisplayName: "Alice",
            roomName: "Bench",
            content: ["msgtype": "m.text", "body": "Message 1"],
            counts: MatrixCounts(unread: 1),
            devices: []
        )
        let device = MatrixDevice(
            appID: "im.bench.web",
            pushkey: Base64URL.encode(p256dh),
            data: ["endpoint": "https://push.example.org/s/1", "auth": .string(Base64URL.encode(auth))]
        )
        guard case .send(let t, _) = MatrixWebPushTranslation.translate(n, device: device), let message = t.webPush else { return [] }
        return message.body
    }

    /// This process's CPU (user + system) per run of `body`, in microseconds, over `n` runs.
    static func measure(_ n: Int, _ body: () throws -> Void) rethrows -> Double {
        let before = Self.processCPU()
        for _ in 0..<n { try body() }
        return (Self.processCPU() - before) * 1e6 / Double(n)
    }

    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
