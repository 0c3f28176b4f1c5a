import Crypto
import Foundation
import PushRelayCore
import PushRelayWebPush
import Testing

/// RFC 8291 encryption and RFC 8292 VAPID, checked against the RFC's worked example and by round trips.
@Suite struct WebPushCryptoTests {
    /// RFC 8291 Appendix A.
    enum Example {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        static let message =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    func bytes(_ s: String) throws -> [UInt8] { try #require(Base64URL.decode(s)) }

    @Test func theRFCExampleKeysAreConsistent() throws {
        let asKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(Example.asPrivate))
        #expect(Base64URL.encode(asKey.publicKey.x963Representation) == Example.asPublic)
        let uaKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(Example.uaPrivate))
        #expect(Base64URL.encode(uaKey.publicKey.x963Representation) == Example.uaPublic)
    }

    @Test func encryptsTheRFC8291ExampleByteForByte() throws {
        let asKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(Example.asPrivate))
        let out = try WebPushEncryption.encrypt(
            Array(Example.plaintext.utf8),
            p256dh: bytes(Example.uaPublic),
            auth: bytes(Example.auth),
            senderKey: asKey,
            salt: bytes(Example.salt)
        )
        #expect(Base64URL.encode(out) == Example.message)
    }

    @Test func decryptsTheRFC8291Example() throws {
        let uaKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(Example.uaPrivate))
        let plain = try WebPushEncryption.decrypt(bytes(Example.message), receiverKey: uaKey, auth: bytes(Example.auth))
        #expect(String(decoding: plain, as: UTF8.self) == Example.plaintext)
    }

    @Test func roundTripsWithRandomKeysAndPadding() throws {
        let ua = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let message = Array(String(repeating: "ünïcödé ", count: 300).utf8)
        let body = try WebPushEncryption.encrypt(message, p256dh: Array(ua.publicKey.x963Representation), auth: auth, padding: 7)
        #expect(body.count == WebPushEncryption.headerLength + message.count + 1 + 7 + 16)
        #expect(Array(body[16..<20]) == [0, 0, 0x10, 0])  // rs = 4096
        #expect(body[20] == 65)
        #expect(try WebPushEncryption.decrypt(body, receiverKey: ua, auth: auth) == message)
        // Another browser's keys cannot read it.
        #expect(throws: WebPushEncryption.Failure.self) { try WebPushEncryption.decrypt(body, receiverKey: .init(), auth: auth) }
    }

    @Test func ephemeralKeysAreFreshValidScalars() throws {
        let keys = (0..<64).map { _ in WebPushEncryption.ephemeralKey() }
        #expect(Set(keys.map { $0.rawRepresentation }).count == 64)
        let ua = P256.KeyAgreement.PrivateKey()
        for key in keys.prefix(4) {
            // The public key is the scalar's: both sides agree on the secret.
            let ours = try key.sharedSecretFromKeyAgreement(with: ua.publicKey)
            let theirs = try ua.sharedSecretFromKeyAgreement(with: key.publicKey)
            #expect(ours == theirs)
        }
        // What ephemeralKey relies on: a scalar outside [1, n - 1] is refused, so it is drawn again.
        #expect(throws: (any Error).self) { try P256.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: (any Error).self) { try P256.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0xFF, count: 32)) }
        let order = try bytes("_____wAAAAD__________7zm-q2nF56E87nKwvxjJVE")
        #expect(throws: (any Error).self) { try P256.KeyAgreement.PrivateKey(rawRepresentation: order) }
        #expect(throws: Never.self) { try P256.KeyAgreement.PrivateKey(rawRepresentation: order.dropLast() + [order.last! - 1]) }
    }

    @Test func refusesBadSubscriptionKeysAndOversizedMessages() throws {
        let ua = P256.KeyAgreement.PrivateKey()
        let auth = [UInt8](repeating: 1, count: 16)
        #expect(throws: WebPushEncryption.Failure.badSubscriptionKey) { try WebPushEncryption.encrypt([1], p256dh: [4, 1, 2], auth: auth) }
        #expect(throws: WebPushEncryption.Failure.badAuthSecret) {
            try WebPushEncryption.encrypt([1], p256dh: Array(ua.publicKey.x963Representation), auth: [1, 2])
        }
        #expect(throws: WebPushEncryption.Failure.tooLarge(bytes: 4080, limit: 4079)) {
            try WebPushEncryption.encrypt([UInt8](repeating: 0x41, count: 4080), p256dh: Array(ua.publicKey.x963Representation), auth: auth)
        }
    }

    @Test func vapidJWTHasTheRFC8292Shape() throws {
        let key = P256.Signing.PrivateKey()
        let signer = VAPIDSigner(key: key, contact: "ops@example.org")
        let now = Date(timeIntervalSince1970: 1_800_000_000.75)
        let (jwt, exp) = signer.token(audience: "https://push.example.net", now: now)
        #expect(exp == 1_800_000_000 + 12 * 3600)
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONParser.parse(bytes(parts[0]))
        let claims = try JSONParser.parse(bytes(parts[1]))
        #expect(header == ["typ": "JWT", "alg": "ES256"])
        #expect(claims == ["aud": "https://push.example.net", "exp": .int(exp), "sub": "mailto:ops@example.org"])
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: bytes(parts[2]))
        #expect(key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
        #expect(signer.authorization(jwt: jwt) == "vapid t=\(jwt), k=\(Base64URL.encode(key.publicKey.x963Representation))")
        // Lifetimes are clamped to the 24 h RFC 8292 allows.
        #expect(VAPIDSigner(key: key, contact: "a@b", lifetimeSeconds: 90_000).lifetimeSeconds == 86_400)
        #expect(VAPIDSigner.subject(for: "mailto:x@y") == "mailto:x@y")
        #expect(VAPIDSigner.subject(for: "https://example.org/contact") == "https://example.org/contact")
    }

    @Test func audienceIsTheEndpointOrigin() {
        #expect(VAPIDSigner.audience(forEndpoint: "https://fcm.googleapis.com/fcm/send/abc:def") == "https://fcm.googleapis.com")
        #expect(VAPIDSigner.audience(forEndpoint: "https://Push.Example.net:443/x") == "https://push.example.net")
        #expect(VAPIDSigner.audience(forEndpoint: "https://127.0.0.1:8443/push/1") == "https://127.0.0.1:8443")
        #expect(VAPIDSigner.audience(forEndpoint: "not a url") == nil)
    }

    @Test func vapidKeysReadPKCS8SEC1AndRaw() throws {
        let (key, pem) = VAPIDKey.generate()
        #expect(pem.contains("BEGIN PRIVATE KEY"))
        #expect(VAPIDKey.parse(pem)?.rawRepresentation == key.rawRepresentation)
        // `openssl ecparam -genkey` writes SEC1.
        let sec1 = """
            -----BEGIN EC PRIVATE KEY-----
            MHcCAQEEIALqLHQDgQiP0mrLV49GyKtZLb9k/MBSEUfGSP5h7RPdoAoGCCqGSM49
            AwEHoUQDQgAEjgveK8ZZKvPGfi+Wc6hgsN5/wHch5IphbH2kJR+HybcolTPtKMdF
            C2LtfzGzjAVkfdMFK0ZyiQajkIkLkRpWTw==
            -----END EC PRIVATE KEY-----
            """
        #expect(VAPIDKey.parse(sec1) != nil)
        #expect(VAPIDKey.parse(Base64URL.encode(key.rawRepresentation))?.rawRepresentation == key.rawRepresentation)
        #expect(VAPIDKey.parse("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----") == nil)
    }
}
