import Foundation
import Testing

@testable import PushRelayCore

/// One case in `MatrixGolden/` (written by `scripts/matrix-golden.py`):
/// `{"name", "format": "apns"|"fcm"|"webpush", "options"?: {...}, "request": {"notification": {...}},
///   "expected": {"send": {...}} | {"skip": true} | {"reject": true} | {"tooLarge": true}}`.
enum MatrixGolden {
    static var directory: URL { Bundle.module.url(forResource: "MatrixGolden", withExtension: nil)! }

    static func caseFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func load(_ file: String) throws -> JSONValue {
        try JSONValue.parse(Data(contentsOf: directory.appendingPathComponent(file)))
    }

    static func format(_ c: JSONValue) -> MatrixFormat {
        let o = c["options"] ?? [:]
        switch c["format"]?.stringValue {
        case "apns":
            return .apns(
                MatrixAPNsOptions(
                    pushType: o["push_type"]?.stringValue,
                    convertDeviceTokenToHex: o["convert_device_token_to_hex"]?.boolValue ?? true,
                    sendBadgeCounts: o["send_badge_counts"]?.boolValue ?? true
                )
            )
        case "webpush":
            return .webPush
        default:
            return .fcm(
                MatrixFCMOptions(fcmOptions: o["fcm_options"]?.objectValue ?? [:], sendBadgeCounts: o["send_badge_counts"]?.boolValue ?? true)
            )
        }
    }

    /// The translation as the golden files spell it.
    static func actual(_ t: MatrixTranslation) -> JSONValue {
        switch t {
        case .skip: return ["skip": true]
        case .reject: return ["reject": true]
        case .tooLarge: return ["tooLarge": true]
        case .send(let n, let token):
            var s: [String: JSONValue] = ["token": .string(token)]
            if let apns = n.apns {
                s["headers"] = .object(apns.headers.mapValues(JSONValue.string))
                s["payload"] = apns.payload
            } else if let wp = n.webPush {
                s["endpoint"] = .string(wp.endpoint)
                s["auth"] = .string(wp.auth)
                s["body"] = (try? JSONParser.parse(wp.body)) ?? .null
                if let u = wp.urgency { s["urgency"] = .string(u) }
                if let t = wp.topic { s["topic"] = .string(t) }
                #expect(wp.p256dh == token)
            } else {
                s["message"] = n.fcmMessage
            }
            return ["send": .object(s)]
        }
    }
}

@Suite struct MatrixGoldenTests {
    @Test func thereAreGoldenCasesForEveryFormat() {
        let files = MatrixGolden.caseFiles()
        #expect(files.filter { $0.hasPrefix("apns_") }.count >= 25)
        #expect(files.filter { $0.hasPrefix("fcm_") }.count >= 10)
        #expect(files.filter { $0.hasPrefix("webpush_") }.count >= 8)
    }

    @Test(arguments: MatrixGolden.caseFiles())
    func golden(_ file: String) throws {
        let c = try MatrixGolden.load(file)
        let n = try MatrixNotification(body: try #require(c["request"]))
        let device = try #require(n.devices.first)
        let got = MatrixGolden.actual(MatrixGolden.format(c).translate(n, device: device))
        let expected = canonical(try #require(c["expected"]))
        let diff = differences(canonical(got), expected)
        #expect(diff.isEmpty, Comment(rawValue: "\(file):\n" + diff.prefix(8).joined(separator: "\n")))
    }

    /// The payload limits hold for every golden that sends.
    @Test(arguments: MatrixGolden.caseFiles())
    func sentPayloadsFitTheirLimits(_ file: String) throws {
        let c = try MatrixGolden.load(file)
        let n = try MatrixNotification(body: try #require(c["request"]))
        guard case .send(let t, _) = MatrixGolden.format(c).translate(n, device: n.devices[0]) else { return }
        if let apns = t.apns { #expect(JSONWriter.bytes(apns.payload).count <= MatrixAPNsTranslation.maxPayloadBytes) }
        if let wp = t.webPush { #expect(wp.body.count <= MatrixWebPushTranslation.maxPlaintextBytes) }
        if t.apns == nil, t.webPush == nil, case .object(let data)? = t.fcmMessage["data"] {
            for (k, v) in data {
                let s = try #require(v.stringValue, "data.\(k) is not a string" as Comment)
                #expect(s.utf8.count <= MatrixFCMTranslation.maxBytesPerField)
            }
        }
    }
}

@Suite struct MatrixRequestTests {
    func parse(_ json: String) -> Result<MatrixNotification, MatrixRequestError> {
        do throws(MatrixRequestError) {
            let body = try! JSONParser.parse(json)
            return .success(try MatrixNotification(body: body))
        } catch {
            return .failure(error)
        }
    }

    func code(_ json: String) -> String? {
        if case .failure(let e) = parse(json) { return e.code.rawValue }
        return nil
    }

    @Test func validationErrorsCarryMatrixCodes() {
        #expect(code(#"[]"#) == "M_BAD_JSON")
        #expect(code(#"{}"#) == "M_MISSING_PARAM")
        #expect(code(#"{"notification": 5}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {}}"#) == "M_MISSING_PARAM")
        #expect(code(#"{"notification": {"devices": {}}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"devices": []}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"devices": [5]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"devices": [{"pushkey": "k"}]}}"#) == "M_MISSING_PARAM")
        #expect(code(#"{"notification": {"devices": [{"app_id": "a"}]}}"#) == "M_MISSING_PARAM")
        #expect(code(#"{"notification": {"devices": [{"app_id": 1, "pushkey": "k"}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"devices": [{"app_id": "a", "pushkey": "k", "pushkey_ts": "x"}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"devices": [{"app_id": "a", "pushkey": "k", "data": []}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"devices": [{"app_id": "a", "pushkey": "k", "tweaks": "loud"}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"counts": {"unread": "2"}, "devices": [{"app_id": "a", "pushkey": "k"}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"event_id": 5, "devices": [{"app_id": "a", "pushkey": "k"}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"content": "x", "devices": [{"app_id": "a", "pushkey": "k"}]}}"#) == "M_BAD_JSON")
        #expect(code(#"{"notification": {"user_is_target": "yes", "devices": [{"app_id": "a", "pushkey": "k"}]}}"#) == "M_BAD_JSON")
    }

    @Test func errorMessagesNameTheField() throws {
        guard case .failure(let e) = parse(#"{"notification": {"devices": [{"app_id": "a", "pushkey": "k"}, {"app_id": "b"}]}}"#) else {
            Issue.record("accepted")
            return
        }
        #expect(e.message.contains("notification.devices[1].pushkey"))
    }

    @Test func nullsAreAbsentAndPrioDefaultsToHigh() throws {
        let n = try parse(
            #"{"notification": {"event_id": null, "prio": null, "counts": {"unread": 3, "missed_calls": null},"#
                + #" "devices": [{"app_id": "a", "pushkey": "k", "pushkey_ts": 12, "data": null, "tweaks": {"sound": "bing"}}]}}"#
        ).get()
        #expect(n.eventID == nil)
        #expect(n.prio == .high)
        #expect(n.counts == MatrixCounts(unread: 3, missedCalls: nil))
        #expect(n.devices == [MatrixDevice(appID: "a", pushkey: "k", pushkeyTS: 12, data: [:], tweaks: ["sound": "bing"])])
        #expect(try parse(#"{"notification": {"prio": "low", "devices": [{"app_id": "a", "pushkey": "k"}]}}"#).get().prio == .low)
    }

    @Test func narrowingToOneDeviceRoundTrips() throws {
        let n = try parse(
            #"{"notification": {"event_id": "$e", "room_id": "!r", "type": "m.room.message", "user_is_target": false,"#
                + #" "content": {"body": "hi"}, "counts": {"unread": 1}, "prio": "low","#
                + #" "devices": [{"app_id": "a", "pushkey": "k1"}, {"app_id": "b", "pushkey": "k2", "data": {"format": "event_id_only"}}]}}"#
        ).get()
        let one = n.only(n.devices[1])
        #expect(try MatrixNotification(body: one.json) == one)
        #expect(one.devices.map(\.pushkey) == ["k2"])
    }
}

@Suite struct MatrixRuleTests {
    /// hashlib.blake2s(bytes(range(64))).hexdigest(): exactly one block.
    static let hash64 = "56f34e8b96557e90c1f24b52d0c89d51086acf1b00f634cf1dde9233b8eaaa3e"

    @Test func exactAppIDsWinOverGlobsAndAmbiguityIsRefused() {
        let table = MatrixAppTable(["im.vector.app.ios": 1, "im.vector.*": 2, "*.android": 3, "org.example.web": 4])
        func which(_ id: String) -> String {
            switch table.match(id) {
            case .app(let key, let v): return "\(key)=\(v)"
            case .noMatch: return "none"
            case .ambiguous(let keys): return "ambiguous:" + keys.joined(separator: ",")
            }
        }
        #expect(which("im.vector.app.ios") == "im.vector.app.ios=1")
        #expect(which("im.vector.app.web") == "im.vector.*=2")
        #expect(which("com.example.android") == "*.android=3")
        #expect(which("im.vector.android") == "ambiguous:*.android,im.vector.*")
        #expect(which("org.example.web") == "org.example.web=4")
        #expect(which("org.other") == "none")
    }

    @Test func blake2sMatchesRFC7693AndPython() {
        func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(BLAKE2s.hash(Array("abc".utf8))) == "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982")
        #expect(hex(BLAKE2s.hash([], digestLength: 22)) == "c3296897bb43ce9211a9121cf1767b34b8d9349fb06b")
        // Multi-block input (hashlib.blake2s(bytes(range(200))).hexdigest()).
        #expect(hex(BLAKE2s.hash((0..<200).map { UInt8($0) })) == "6d244e1a06ce4ef578dd0f63aff0936706735119ca9c8d22d86c801414ab9741")
        #expect(hex(BLAKE2s.hash((0..<64).map { UInt8($0) })) == "\(Self.hash64)")
        #expect(MatrixWebPushTranslation.topic(roomID: "!slw48wfj34rtnrf:example.org") == "PBkf1POw4SlQiAVKK_FX-neVlrdo_w")
    }

    @Test func utf8TruncationKeepsWholeCharacters() {
        #expect(MatrixText.truncatedUTF8("abc", maxBytes: 3) == "abc")
        #expect(MatrixText.truncatedUTF8("abcd", maxBytes: 3) == "…")
        #expect(MatrixText.truncatedUTF8("abcdef", maxBytes: 5) == "ab…")
        #expect(MatrixText.truncatedUTF8("a⚑bcdef", maxBytes: 6) == "a…")
        #expect(MatrixText.truncatedUTF8("🇫🇷🇫🇷🇫🇷", maxBytes: 20) == "🇫🇷🇫🇷…")  // 8-byte flags are never split
        #expect(MatrixText.truncatedUTF8("🇫🇷🇫🇷🇫🇷", maxBytes: 18) == "🇫🇷…")
    }

    @Test func trimmerShortensTheLongestChoppableFirst() throws {
        let payload: JSONValue = ["a": .string(String(repeating: "x", count: 50)), "b": .string(String(repeating: "y", count: 20)), "c": 1]
        let fitted = try #require(PayloadTrimmer.fit(payload, limit: 60, choppable: [[.key("a")], [.key("b")]]))
        #expect(JSONWriter.bytes(fitted).count == 60)
        // 31 bytes over: "a" shrinks to 20, then wins the tie with "b" once.
        #expect(fitted["a"]?.stringValue?.count == 19)
        #expect(fitted["b"]?.stringValue?.count == 20)
        #expect(PayloadTrimmer.fit(payload, limit: 10, choppable: [[.key("a")], [.key("b")]]) == nil)
        #expect(PayloadTrimmer.fit(payload, limit: 1000, choppable: []) == payload)
    }
}
