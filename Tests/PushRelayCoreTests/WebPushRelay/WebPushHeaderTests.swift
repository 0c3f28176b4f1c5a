import Foundation
import PushRelayCore
import Testing

@Suite struct WebPushHeaderTests {
    func parse(_ headers: [String: String]) throws(WebPushHeaderError) -> WebPushHeaders {
        let lower = Dictionary(uniqueKeysWithValues: headers.map { ($0.key.lowercased(), $0.value) })
        return try WebPushHeaders(header: { lower[$0] })
    }

    @Test func aes128gcmNeedsNoParameters() throws {
        let h = try parse(["Content-Encoding": "aes128gcm", "TTL": "60", "Urgency": "low", "Topic": "t1"])
        #expect(h.encoding == .aes128gcm)
        #expect(h.ttlSeconds == 60)
        #expect(h.urgency == .low)
        #expect(h.urgency.isImmediate == false)
        #expect(h.topic == "t1")
        #expect(h.acceptedTTL == 60)
    }

    @Test(arguments: [
        // Several parameters, either separator, padded or not, quoted, odd case and spacing.
        ("salt=AQID", "dh=BAUG"),
        ("keyid=p256dh; salt=AQID", "keyid=p256dh;dh=BAUG;p256ecdsa=AAAA"),
        ("SALT = \"AQID\"", "p256ecdsa=AAAA, dh=BAUG"),
        ("salt=AQI=", "dh=BAU="),
    ])
    func aesgcmParametersAreParsedRobustly(encryption: String, cryptoKey: String) throws {
        let h = try parse(["content-encoding": "AESGCM", "ENCRYPTION": encryption, "crypto-key": cryptoKey])
        guard case .aesgcm(let dh, let salt) = h.encoding else {
            Issue.record("not aesgcm")
            return
        }
        #expect(salt.starts(with: [1, 2]))
        #expect(dh.starts(with: [4, 5]))
    }

    @Test func base64urlAlphabetAndPadding() {
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("+/8=") == [0xFB, 0xFF])
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("a*b") == nil)
    }

    @Test func errorsCarryTheirStatus() {
        #expect(throws: WebPushHeaderError.unsupportedEncoding(nil)) { try parse([:]) }
        #expect(throws: WebPushHeaderError.unsupportedEncoding("gzip")) { try parse(["content-encoding": "gzip"]) }
        #expect(throws: WebPushHeaderError.missingParameter(header: "Crypto-Key", parameter: "dh")) {
            try parse(["content-encoding": "aesgcm", "encryption": "salt=AQID"])
        }
        #expect(throws: WebPushHeaderError.missingParameter(header: "Encryption", parameter: "salt")) {
            try parse(["content-encoding": "aesgcm", "crypto-key": "dh=AQID", "encryption": "rs=4096"])
        }
        #expect(WebPushHeaderError.unsupportedEncoding(nil).status == 415)
        #expect(WebPushHeaderError.missingParameter(header: "a", parameter: "b").status == 400)
        #expect(throws: WebPushHeaderError.self) { try parse(["content-encoding": "aes128gcm", "ttl": "-1"]) }
        #expect(throws: WebPushHeaderError.self) { try parse(["content-encoding": "aes128gcm", "topic": String(repeating: "x", count: 65)]) }
    }

    @Test(arguments: ["a\u{85}b", "\u{FEFF}t", "t\u{2028}", "a\u{200B}b", "a\u{1}b"])
    func aTopicWithAnInvisibleCharacterIsRefused(topic: String) throws {
        #expect(throws: WebPushHeaderError.self) { try parse(["content-encoding": "aes128gcm", "topic": topic]) }
        do {
            _ = try parse(["content-encoding": "aes128gcm", "topic": topic])
        } catch {
            #expect(error.status == 400)
            #expect(error.description.hasPrefix("The Topic header "), "\(error)")
        }
        #expect(try parse(["content-encoding": "aes128gcm", "topic": " room 1 "]).topic == "room 1")
    }

    @Test func ttlIsClampedAndUrgencyDefaultsToImmediate() throws {
        let h = try parse(["content-encoding": "aes128gcm", "ttl": "99999999"])
        #expect(h.ttlSeconds == WebPushHeaders.maxTTLSeconds)
        #expect(h.urgency.isImmediate)
        #expect(try parse(["content-encoding": "aes128gcm", "urgency": "very-low"]).urgency.isImmediate == false)
        #expect(try parse(["content-encoding": "aes128gcm", "urgency": "very-high"]).urgency.isImmediate)
        #expect(try parse(["content-encoding": "aes128gcm"]).ttlSeconds == nil)
    }
}
