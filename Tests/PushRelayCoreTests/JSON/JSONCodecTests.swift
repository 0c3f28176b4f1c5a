import Foundation
import Testing

@testable import PushRelayCore

@Suite struct JSONCodecTests {
    @Test func parsesEveryKindOfValue() throws {
        let v = try JSONParser.parse(#" {"a": [1, -2, 3.5, 1e3, true, false, null, "x\"y\\z\n\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(
            v == [
                "a": [.int(1), .int(-2), .double(3.5), .double(1000), true, false, .null, .string("x\"y\\z\né😀")],
                "b": .object([:]),
            ]
        )
    }

    @Test func keepsIntegersApartFromDoubles() throws {
        #expect(try JSONParser.parse("5") == .int(5))
        #expect(try JSONParser.parse("5.0") == .double(5))
        #expect(try JSONParser.parse("-0") == .int(0))
        #expect(try JSONParser.parse("12345678901234567890") == .double(12_345_678_901_234_567_890))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{'a':1}", "01", "1.", ".5", "-", "tru", "nul", "\"abc", "\"\\x\"",
        "\"\\ud800\"", "{\"a\" 1}", "[1 2]", "1 2", "\"a\u{01}b\"", "NaN", "1e", "{\"a\":}",
    ])
    func rejectsInvalidJSON(_ text: String) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
        // After ASCII, in a key, cut short before the closing quote, and an overlong encoding of "/".
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x22, 0x61, 0x62, 0x80, 0x22]) }
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D]) }
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x22, 0xF0, 0x9F, 0x98, 0x22]) }
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse([0x22, 0xC0, 0xAF, 0x22]) }
    }

    /// Strings without escapes take the parser's fast path: ASCII-only ones and ones with raw multi-byte UTF-8 read the
    /// same as their escaped spelling.
    @Test func unescapedStringsReadAsTheirEscapedSpelling() throws {
        #expect(
            try JSONParser.parse(#"{"plain":"Door opened","empty":"","raw":"Porte ouverte à 7 h 😀"}"#) == [
                "plain": "Door opened", "empty": "", "raw": "Porte ouverte à 7 h 😀",
            ]
        )
        #expect(try JSONParser.parse(#""Porte ouverte \u00e0 7 h \ud83d\ude00""#) == JSONParser.parse(#""Porte ouverte à 7 h 😀""#))
    }

    @Test func refusesHostileNesting() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSONParser.parse(ok)) != nil)
    }

    @Test func writerRoundTripsAndSortsKeys() throws {
        let v: JSONValue = ["z": 1, "a": ["s": "q\"uote\n\t\u{01}", "n": .null, "d": 0.25, "b": false], "m": [1, "two", [3]]]
        let text = JSONWriter.string(v)
        #expect(text == #"{"a":{"b":false,"d":0.25,"n":null,"s":"q\"uote\n\t\u0001"},"m":[1,"two",[3]],"z":1}"#)
        #expect(try JSONParser.parse(text) == v)
        // Foundation agrees that it is JSON.
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil)
    }

    @Test func fcmDataStringsAreNeverObjectObject() {
        #expect(JSONValue.object(["a": 1]).fcmDataString == #"{"a":1}"#)
        #expect(JSONValue.array([1, "b"]).fcmDataString == #"[1,"b"]"#)
        #expect(JSONValue.bool(true).fcmDataString == "true")
        #expect(JSONValue.int(0).fcmDataString == "0")
        #expect(JSONValue.double(1.5).fcmDataString == "1.5")
        #expect(JSONValue.double(2).fcmDataString == "2")
    }
}
