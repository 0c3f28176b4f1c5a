import Foundation
import PushRelayCore
import Testing

private func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = s.startIndex
    while i < s.endIndex {
        let j = s.index(i, offsetBy: 2)
        out.append(UInt8(s[i..<j], radix: 16)!)
        i = j
    }
    return out
}

@Suite struct ExtendedZ85Tests {
    @Test(arguments: [
        ("864FD26FB559F75B", "HelloWorld"), ("00", "00"), ("01", "01"), ("ff", "30"), ("0102", "033"), ("ffff", "960"),
        ("010203", "09c6"), ("ffffff", "rr90"), ("0102030405", "0rJua05"), ("deadbeefcafe", "?MsJX7gv"),
    ])
    func referenceVectors(input: String, encoded: String) {
        #expect(ExtendedZ85.encode(hex(input)) == encoded)
        #expect(ExtendedZ85.decode(encoded) == hex(input))
    }

    @Test func roundTripsEveryLengthUpTo64() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            for pattern in 0..<4 {
                let bytes: [UInt8] = (0..<length).map { i in
                    switch pattern {
                    case 0: return 0x00
                    case 1: return 0xFF
                    case 2: return UInt8(truncatingIfNeeded: i &* 37 &+ 11)
                    default: return UInt8.random(in: 0...255, using: &generator)
                    }
                }
                let text = ExtendedZ85.encode(bytes)
                #expect(text.utf8.count == ExtendedZ85.encodedLength(byteCount: length))
                #expect(text.utf8.count % 5 != 1, "a single leftover digit is never produced")
                #expect(text.utf8.allSatisfy { ExtendedZ85.alphabet.contains($0) })
                #expect(ExtendedZ85.decode(text) == bytes, "length \(length) pattern \(pattern)")
            }
        }
    }

    @Test func decoderSkipsCharactersOutsideTheAlphabet() {
        #expect(ExtendedZ85.decode("Hello World\n") == hex("864FD26FB559F75B"))
        #expect(ExtendedZ85.decode("") == [])
        #expect(ExtendedZ85.decode("0") == [], "one leftover digit carries no byte")
    }

    @Test func alphabetIsTheZeroMQSet() {
        #expect(ExtendedZ85.alphabet.count == 85)
        #expect(Set(ExtendedZ85.alphabet).count == 85)
    }
}

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
        #expect(Base64Lenient.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64Lenient.decode("+/8=") == [0xFB, 0xFF])
        #expect(Base64Lenient.decode("A") == nil)
        #expect(Base64Lenient.decode("a*b") == nil)
        #expect(Base64Lenient.encode([0xFB, 0xFF]) == "+/8=")
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

    @Test func ttlIsClampedAndUrgencyDefaultsToImmediate() throws {
        let h = try parse(["content-encoding": "aes128gcm", "ttl": "99999999"])
        #expect(h.ttlSeconds == WebPushHeaders.maxTTLSeconds)
        #expect(h.urgency.isImmediate)
        #expect(try parse(["content-encoding": "aes128gcm", "urgency": "very-low"]).urgency.isImmediate == false)
        #expect(try parse(["content-encoding": "aes128gcm", "urgency": "very-high"]).urgency.isImmediate)
        #expect(try parse(["content-encoding": "aes128gcm"]).ttlSeconds == nil)
    }
}

@Suite struct RelayTargetTests {
    static let token = String(repeating: "ab12", count: 16)

    @Test func pathsAreParsed() throws {
        #expect(
            try RelayTarget.parse(path: "/relay-to/production/\(Self.token)").get()
                == RelayTarget(destination: .apns(production: true), token: Self.token)
        )
        #expect(
            try RelayTarget.parse(path: "/relay-to/development/\(Self.token)/a/b").get()
                == RelayTarget(destination: .apns(production: false), token: Self.token, extra: "a/b")
        )
        #expect(try RelayTarget.parse(path: "/relay-to/fcm/abc:def/x").get() == RelayTarget(destination: .fcm, token: "abc:def", extra: "x"))
        #expect(try RelayTarget.parse(path: "/relay-to/production/\(Self.token)/").get().extra == nil)
    }

    @Test func badPathsAreRefused() {
        for path in ["/relay-to/production", "/relay-to/staging/\(Self.token)", "/relay-to/production/nothex", "/relay-to/fcm/"] {
            if case .success = RelayTarget.parse(path: path) { Issue.record("accepted \(path)") }
        }
    }

    @Test func unsubscribeOnlyToListedHosts() {
        #expect(UnsubscribePolicy.allows("https://mastodon.example/api/unsub", allowedHosts: []) == false)
        #expect(UnsubscribePolicy.allows("https://mastodon.example/api/unsub", allowedHosts: ["Mastodon.Example"]))
        #expect(UnsubscribePolicy.allows("https://evil.example/x", allowedHosts: ["mastodon.example"]) == false)
        #expect(UnsubscribePolicy.allows("file:///etc/passwd", allowedHosts: ["mastodon.example"]) == false)
        #expect(UnsubscribePolicy.allows("https://u:p@mastodon.example/", allowedHosts: ["mastodon.example"]) == false)
    }
}

@Suite struct RelayPayloadTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func apnsAesgcmCarriesKeyAndSalt() throws {
        let h = WebPushHeaders(encoding: .aesgcm(dh: [1, 2, 3], salt: [0xFF]), ttlSeconds: 60, urgency: .veryLow, topic: "t")
        let n = try RelayPayload.apns(body: [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B], headers: h, extra: "acct/1", alertText: "🎺", now: now)
        let apns = try #require(n.apns)
        #expect(
            apns.payload == [
                "aps": ["alert": "🎺", "mutable-content": 1, "content-available": 1],
                "p": "HelloWorld", "k": "09c6", "s": "30", "x": "acct/1",
            ]
        )
        #expect(apns.headers == ["apns-push-type": "alert", "apns-priority": "5", "apns-expiration": "1800000060", "apns-collapse-id": "t"])
    }

    @Test func apnsAes128gcmHasNoKeyOrSaltAndTTLZeroIsExpirationZero() throws {
        let n = try RelayPayload.apns(body: [0], headers: WebPushHeaders(encoding: .aes128gcm, ttlSeconds: 0), extra: nil, alertText: "New", now: now)
        #expect(n.apns?.payload == ["aps": ["alert": "New", "mutable-content": 1, "content-available": 1], "p": "00"])
        #expect(n.apns?.headers == ["apns-push-type": "alert", "apns-priority": "10", "apns-expiration": "0"])
    }

    @Test func fcmMessageMatchesTheFCMRelay() throws {
        let a = try RelayPayload.fcm(
            token: "tok",
            body: [0xFF],
            headers: WebPushHeaders(encoding: .aes128gcm, ttlSeconds: 30, urgency: .low, topic: "c"),
            extra: nil,
            alertText: "🎺"
        )
        #expect(
            a.fcmMessage == [
                "token": "tok", "data": ["p": "30", "rfc": "1"], "notification": ["title": "🎺"],
                "android": ["priority": "normal", "ttl": "30s", "collapse_key": "c"],
                "apns": ["payload": ["aps": ["mutable-content": 1, "content-available": 1]]],
            ]
        )
        let b = try RelayPayload.fcm(
            token: "tok",
            body: [0xFF],
            headers: WebPushHeaders(encoding: .aesgcm(dh: [1], salt: [0])),
            extra: "x1",
            alertText: "A"
        )
        #expect(b.fcmMessage["data"] == ["p": "30", "k": "01", "s": "00", "x": "x1"])
        #expect(b.fcmMessage["android"] == ["priority": "high"])
    }

    @Test func tooLargeAfterEncodingIsRefused() {
        let body = [UInt8](repeating: 7, count: 3500)  // 4375 characters of z85
        #expect(throws: RelayPayloadError.self) {
            try RelayPayload.apns(body: body, headers: WebPushHeaders(encoding: .aes128gcm), extra: nil, alertText: "a", now: now)
        }
        #expect(throws: RelayPayloadError.self) {
            try RelayPayload.fcm(token: "t", body: body, headers: WebPushHeaders(encoding: .aes128gcm), extra: nil, alertText: "a")
        }
    }
}

@Suite struct CallInvitePayloadTests {
    /// Reads a zlib stream of stored blocks back (enough to check the writer; the Python interop test uses real zlib).
    static func inflateStored(_ z: [UInt8]) -> [UInt8]? {
        guard z.count >= 6, z[0] == 0x78, (UInt16(z[0]) << 8 | UInt16(z[1])) % 31 == 0 else { return nil }
        var i = 2
        var out: [UInt8] = []
        while true {
            let header = z[i]
            guard header & 0x06 == 0 else { return nil }
            let len = Int(z[i + 1]) | Int(z[i + 2]) << 8
            let nlen = Int(z[i + 3]) | Int(z[i + 4]) << 8
            guard len == (~nlen & 0xFFFF) else { return nil }
            out.append(contentsOf: z[(i + 5)..<(i + 5 + len)])
            i += 5 + len
            if header & 1 == 1 { break }
        }
        let a = UInt32(z[i]) << 24 | UInt32(z[i + 1]) << 16 | UInt32(z[i + 2]) << 8 | UInt32(z[i + 3])
        guard a == ZlibStored.adler32(out), i + 4 == z.count else { return nil }
        return out
    }

    @Test func zlibStoredRoundTripsAcrossBlockBoundaries() {
        #expect(ZlibStored.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        for n in [0, 1, 100, 65_535, 65_536, 140_000] {
            let input = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(Self.inflateStored(ZlibStored.compress(input)) == input, "length \(n)")
        }
        #expect(ZlibStored.compress([]) == [0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01])
    }

    static let invite = CallInvite(
        notificationUUID: "6f1c…",
        callerName: "Alice",
        callerID: "+15551234",
        title: "Call",
        withVideo: true,
        inviteCiphertext: "AAAA",
        iv: "BBBB",
        tag: "CCCC"
    )

    @Test func payloadHasEveryDocumentedField() {
        #expect(
            Self.invite.payload == [
                "notification_uuid": "6f1c…", "type": "call_invite", "version": "1", "with_video": "true",
                "incoming_caller_name": "Alice", "incoming_caller_id": "+15551234", "title": "Call", "encryption_type": "aes_256_gcm",
                "invite": "AAAA", "iv": "BBBB", "tag": "CCCC",
            ]
        )
    }

    @Test func apnsIsAVoIPPushWrappedInAlert() throws {
        let n = try CallInvitePush.apns(Self.invite)
        #expect(n.apns?.headers == ["apns-push-type": "voip", "apns-priority": "10", "apns-expiration": "0"])
        #expect(n.apns?.payload["aps"]?["alert"] == Self.invite.payload)
        var big = Self.invite
        big.inviteCiphertext = String(repeating: "A", count: 5200)
        #expect(throws: RelayPayloadError.self) { try CallInvitePush.apns(big) }
    }

    @Test func fcmCarriesThePayloadAsABodyString() throws {
        let n = try CallInvitePush.fcm(Self.invite, token: "t")
        let body = try #require(n.fcmMessage["notification"]?["body"]?.stringValue)
        #expect(try JSONParser.parse(Array(body.utf8)) == Self.invite.payload)
        #expect(n.fcmMessage["data"] == .object([:]))
        #expect(n.fcmMessage["android"]?["priority"] == "high")
    }
}

@Suite struct EncryptedNotificationTests {
    static let sealed = SealedPayload(ciphertext: "CT", iv: "IV", tag: "TG")

    @Test func androidDataIsReplacedByTheSealedFields() {
        let n = HANotification(
            message: "Door open",
            title: "Security",
            data: ["priority": "high", "ttl": 0],
            pushToken: "fcm:t",
            registrationInfo: .init(appID: "io.homeassistant.companion.android", webhookID: "hook")
        )
        let t = AndroidTranslation.translate(n)
        #expect(EncryptedNotification.canSeal(t, platform: .android))
        let plain = try? JSONParser.parse(EncryptedNotification.plaintext(t, platform: .android))
        #expect(plain == t.fcmMessage["data"])
        #expect(plain?["message"] == "Door open")
        let sealed = EncryptedNotification.apply(t, platform: .android, sealed: Self.sealed, alertText: "New notification")
        #expect(sealed.fcmMessage["data"] == ["encrypted": "CT", "iv": "IV", "tag": "TG", "encryption_type": "aes_256_gcm"])
        #expect(sealed.fcmMessage["android"] == t.fcmMessage["android"], "priority and TTL are kept")
        #expect(!sealed.fcmMessage.jsonString().contains("Door") && !sealed.fcmMessage.jsonString().contains("hook"))
    }

    @Test func iosGetsAGenericAlertAndMutableContent() throws {
        let n = HANotification(
            message: "Door open",
            title: "Security",
            data: ["push": ["sound": "chime.caf", "badge": 2], "url": "/lovelace"],
            pushToken: String(repeating: "ab", count: 32),
            registrationInfo: .init(appID: "io.robbie.HomeAssistant", webhookID: "hook")
        )
        let t = IOSTranslation.translate(n)
        #expect(EncryptedNotification.canSeal(t, platform: .ios))
        #expect(try JSONParser.parse(EncryptedNotification.plaintext(t, platform: .ios)) == t.apns?.payload)
        let s = EncryptedNotification.apply(t, platform: .ios, sealed: Self.sealed, alertText: "New notification")
        let expected: JSONValue = [
            "aps": ["alert": ["body": "New notification"], "mutable-content": 1, "sound": "chime.caf", "badge": 2],
            "encrypted": "CT", "iv": "IV", "tag": "TG", "encryption_type": "aes_256_gcm",
        ]
        #expect(s.apns?.payload == expected)
        #expect(s.apns?.headers == t.apns?.headers)
        #expect(s.fcmMessage["apns"]?["payload"] == expected)
        #expect(s.fcmMessage["notification"] == ["body": "New notification"])
        for text in ["Door", "Security", "lovelace", "hook"] {
            #expect(!s.fcmMessage.jsonString().contains(text) && !(s.apns?.payload.jsonString().contains(text) ?? true))
        }
    }

    @Test func commandsAreNotSealed() {
        let n = HANotification(
            message: "request_location_update",
            pushToken: "fcm:t",
            registrationInfo: .init(appID: "io.homeassistant.companion.android")
        )
        #expect(EncryptedNotification.canSeal(AndroidTranslation.translate(n), platform: .android) == false)
    }
}
