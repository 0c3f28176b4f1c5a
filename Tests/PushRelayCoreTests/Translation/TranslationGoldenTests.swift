import Foundation
import Testing

@testable import PushRelayCore

// MARK: - Golden cases

/// One golden case file in `Golden/`:
/// `{"name", "platform": "android"|"ios", "options"?: {"companionAppIDs": [...], "now": epochSeconds},
/// "request": {...}}` or, for the
/// rate-limit notice, `"notice": {"push_token", "maximum", "resetsAt"}` instead of `request`; and
/// `"expected": {"fcm": {...}, "apns": {"headers": {...}, "payload": {...}} | null, "command": str|null, "critical": bool}`.
enum Golden {
    static var directory: URL {
        Bundle.module.url(forResource: "Golden", withExtension: nil)!
    }

    static func caseFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    static func load(_ file: String) throws -> JSONValue {
        try JSONValue.parse(Data(contentsOf: directory.appendingPathComponent(file)))
    }
}

/// Numbers compare by value (`1` and `1.0` are the same JSON number on the wire).
func canonical(_ v: JSONValue) -> JSONValue {
    switch v {
    case .double(let d) where d.isFinite && d == d.rounded() && abs(d) < 1e15: return .int(Int64(d))
    case .array(let a): return .array(a.map(canonical))
    case .object(let o): return .object(o.mapValues(canonical))
    default: return v
    }
}

/// Paths at which two JSON values differ, for readable failures.
func differences(_ a: JSONValue, _ b: JSONValue, path: String = "$") -> [String] {
    switch (a, b) {
    case (.object(let x), .object(let y)):
        var out: [String] = []
        for key in Set(x.keys).union(y.keys).sorted() {
            switch (x[key], y[key]) {
            case (let l?, let r?): out += differences(l, r, path: path + "." + key)
            case (nil, let r?): out.append("\(path).\(key): missing, expected \(r.jsonString())")
            case (let l?, nil): out.append("\(path).\(key): unexpected \(l.jsonString())")
            default: break
            }
        }
        return out
    case (.array(let x), .array(let y)) where x.count == y.count:
        return zip(x, y).enumerated().flatMap { i, p in differences(p.0, p.1, path: "\(path)[\(i)]") }
    default:
        return a == b ? [] : ["\(path): got \(a.jsonString()), expected \(b.jsonString())"]
    }
}

func actualJSON(_ t: TranslatedNotification) -> JSONValue {
    let apns: JSONValue =
        t.apns.map {
            .object(["headers": .object($0.headers.mapValues(JSONValue.string)), "payload": $0.payload])
        } ?? .null
    return [
        "fcm": t.fcmMessage,
        "apns": apns,
        "command": t.command.map(JSONValue.string) ?? .null,
        "critical": .bool(t.isCritical),
    ]
}

@Suite("Translation golden cases")
struct TranslationGoldenTests {
    @Test func thereAreEnoughGoldenCases() {
        #expect(Golden.caseFiles().count >= 40)
    }

    @Test(arguments: Golden.caseFiles())
    func golden(_ file: String) throws {
        let doc = try Golden.load(file)
        let platform = try #require(doc["platform"]?.stringValue.flatMap(HAPlatform.init(rawValue:)), "\(file): platform")
        let expected = try #require(doc["expected"], "\(file): expected")

        let translated: TranslatedNotification
        if let notice = doc["notice"] {
            let maximum = try #require(notice["maximum"]?.doubleValue)
            translated = RateLimitNotice.translate(
                platform: platform,
                pushToken: try #require(notice["push_token"]?.stringValue),
                maximum: Int(maximum),
                resetsAt: try #require(notice["resetsAt"]?.stringValue)
            )
        } else {
            let request = try HANotification(body: try #require(doc["request"], "\(file): request"))
            switch platform {
            case .android:
                translated = AndroidTranslation.translate(request)
            case .ios:
                var options = IOSTranslationOptions()
                if let ids = doc["options"]?["companionAppIDs"]?.arrayValue {
                    options.companionAppIDs = ids.compactMap(\.stringValue)
                }
                // Files without a Live Activity need no time: any fixed one does.
                let now = Date(timeIntervalSince1970: doc["options"]?["now"]?.doubleValue ?? 1_790_000_000)
                translated = IOSTranslation.translate(request, options: options, now: now)
            }
        }

        let actual = canonical(actualJSON(translated))
        let diffs = differences(actual, canonical(expected))
        #expect(diffs.isEmpty, "\(file): \(diffs.joined(separator: "\n"))\nactual: \(actual.jsonString(pretty: true))")

        // FCM `data` must always be string-only.
        if let data = translated.fcmMessage["data"]?.objectValue {
            #expect(data.values.allSatisfy { $0.stringValue != nil }, "\(file): non-string FCM data")
        }
    }
}

// MARK: - Plain unit tests

@Suite struct GlobTests {
    @Test func literalAndWildcards() {
        #expect(Glob("io.robbie.HomeAssistant").matches("io.robbie.HomeAssistant"))
        #expect(!Glob("io.robbie.HomeAssistant").matches("io.robbie.HomeAssistant.dev"))
        #expect(Glob("*io.robbie.HomeAssistant*").matches("io.robbie.HomeAssistant"))
        #expect(Glob("*io.robbie.HomeAssistant*").matches("io.robbie.HomeAssistant.dev"))
        #expect(Glob("*io.robbie.HomeAssistant*").matches("xyz.io.robbie.HomeAssistant.beta"))
        #expect(!Glob("*io.robbie.HomeAssistant*").matches("io.robbie.homeassistant"))  // case-sensitive
        #expect(Glob("a?c").matches("abc"))
        #expect(!Glob("a?c").matches("ac"))
        #expect(!Glob("a?c").matches("abbc"))
        #expect(Glob("*").matches(""))
        #expect(Glob("").matches(""))
        #expect(!Glob("").matches("a"))
        #expect(Glob("a*b*c").matches("aXXbYYbZc"))
        #expect(!Glob("a*b*c").matches("aXXbYYbZ"))
        #expect(Glob("**x").matches("yyx"))
        #expect(Glob("*.dev").matches("io.robbie.HomeAssistant.dev"))
        #expect(Glob("ü?").matches("üß"))
        // The fast shapes: a trailing-star prefix, and a literal, agree with the general matcher.
        #expect(Glob("io.homeassistant.*").matches("io.homeassistant.companion.android"))
        #expect(Glob("io.homeassistant.*").matches("io.homeassistant."))
        #expect(!Glob("io.homeassistant.*").matches("io.homeassistant"))
        #expect(!Glob("io.homeassistant.*").matches("xio.homeassistant.a"))
        #expect(Glob("io.x*").matches("io.x"))
    }

    @Test func randomIDsAreVersion4UUIDs() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = RandomID.uuid()
            let parts = id.split(separator: "-").map(\.count)
            #expect(parts == [8, 4, 4, 4, 12])
            #expect(id.allSatisfy { "0123456789abcdef-".contains($0) })
            #expect(id[id.index(id.startIndex, offsetBy: 14)] == "4")
            #expect("89ab".contains(id[id.index(id.startIndex, offsetBy: 19)]))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
        #expect(RandomID.hex128().count == 32)
    }

    @Test func companionOptions() {
        let defaults = IOSTranslationOptions()
        #expect(defaults.isCompanionApp("io.robbie.HomeAssistant.dev"))
        #expect(!defaults.isCompanionApp("com.example.app"))
        #expect(!defaults.isCompanionApp(nil))
        let custom = IOSTranslationOptions(companionAppIDs: ["com.example.*", "org.?ther"])
        #expect(custom.isCompanionApp("com.example.ha"))
        #expect(custom.isCompanionApp("org.other"))
        #expect(!custom.isCompanionApp("io.robbie.HomeAssistant"))
    }
}

@Suite struct FCMDataStringTests {
    @Test func scalars() {
        #expect(JSONValue.string("x").fcmDataString == "x")
        #expect(JSONValue.string("").fcmDataString == "")
        #expect(JSONValue.bool(true).fcmDataString == "true")
        #expect(JSONValue.bool(false).fcmDataString == "false")
        #expect(JSONValue.int(0).fcmDataString == "0")
        #expect(JSONValue.int(-42).fcmDataString == "-42")
        #expect(JSONValue.double(0.5).fcmDataString == "0.5")
        #expect(JSONValue.double(3.0).fcmDataString == "3")
        #expect(JSONValue.null.fcmDataString == "null")
    }

    @Test func containersAreCompactSortedJSON() {
        let o: JSONValue = ["b": 1, "a": ["x", true, .null], "c": ["d": "/path"]]
        #expect(o.fcmDataString == #"{"a":["x",true,null],"b":1,"c":{"d":"/path"}}"#)
        #expect(JSONValue.array([]).fcmDataString == "[]")
        #expect(JSONValue.object([:]).fcmDataString == "{}")
    }

    @Test func stringMapDropsNulls() {
        let m = FCMFormat.stringMap(["a": .null, "b": 1, "c": ["k": "v"], "d": "s"])
        #expect(m == ["b": "1", "c": #"{"k":"v"}"#, "d": "s"])
    }
}

@Suite struct FCMFormatTests {
    @Test func durations() {
        #expect(FCMFormat.duration(0) == "0s")
        #expect(FCMFormat.duration(3600) == "3600s")
        #expect(FCMFormat.duration("3600") == "3600s")
        #expect(FCMFormat.duration(" 60 ") == "60s")
        #expect(FCMFormat.duration("60s") == "60s")
        #expect(FCMFormat.duration(1.5) == "1.5s")
        #expect(FCMFormat.duration(0.000000001) == "0.000000001s")
        #expect(FCMFormat.duration(99_999_999) == "2419200s")
        #expect(FCMFormat.duration(-1) == nil)
        #expect(FCMFormat.duration("soon") == nil)
        #expect(FCMFormat.duration("") == nil)
        #expect(FCMFormat.duration(true) == nil)
        #expect(FCMFormat.duration(.null) == nil)
    }

    @Test func priorities() {
        #expect(FCMFormat.androidPriority("high") == "high")
        #expect(FCMFormat.androidPriority("HIGH") == "high")
        #expect(FCMFormat.androidPriority("Normal") == "normal")
        #expect(FCMFormat.androidPriority("urgent") == nil)
        #expect(FCMFormat.androidPriority(10) == nil)
    }
}

@Suite struct CommandRuleTests {
    @Test func android() {
        #expect(ExemptCommands.android("request_location_update") == "request_location_update")
        #expect(ExemptCommands.android("command_dnd") == "command_dnd")
        #expect(ExemptCommands.android("command_wake_word_detection") == "command_wake_word_detection")
        // The official relay counts these two, and any other `command_…` a caller makes up (with a title, visible).
        #expect(ExemptCommands.android("command_launch_app") == nil)
        #expect(ExemptCommands.android("command_beacon_monitor") == nil)
        #expect(ExemptCommands.android("command_anything") == nil)
        #expect(ExemptCommands.android("command_") == nil)
        #expect(ExemptCommands.android("Command_dnd") == nil)
        #expect(ExemptCommands.android("request_location_updates") == nil)
        #expect(ExemptCommands.android(nil) == nil)
    }

    @Test func iOS() {
        #expect(ExemptCommands.iOS("clear_badge", isCompanionApp: true) == "clear_badge")
        #expect(ExemptCommands.iOS("clear_badge", isCompanionApp: false) == nil)
        #expect(ExemptCommands.iOS("kiosk_set_volume", isCompanionApp: true) == nil)
        #expect(ExemptCommands.iOS("test_push_source", isCompanionApp: true) == nil)
        #expect(ExemptCommands.iOS("command_dnd", isCompanionApp: true) == nil)
    }

    @Test func stripExtension() {
        #expect(IOSTranslation.stripExtension("chime.caf") == "chime")
        #expect(IOSTranslation.stripExtension("a.b.wav") == "a.b")
        #expect(IOSTranslation.stripExtension("default") == "default")
        #expect(IOSTranslation.stripExtension(".hidden") == ".hidden")
    }
}
