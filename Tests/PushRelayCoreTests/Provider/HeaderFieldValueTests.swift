import PushRelayCore
import Testing

@Suite struct HeaderFieldValueTests {
    @Test(arguments: [
        "a", "tag-1", "room 42", "a\tb", "~!#$%&'*+-.^_`|", String(repeating: "c", count: 64), "Küche", "é", "温度 1", "🔥",
    ])
    func visibleASCIIWithInnerSpacesPasses(value: String) {
        #expect(HeaderFieldValue.problem(value, maxBytes: 64) == nil)
        #expect(HeaderFieldValue.isValid(value))
    }

    @Test(arguments: [
        ("", "empty"), (" a", "space"), ("a ", "space"), ("\ta", "space"), ("a\t", "space"), (" ", "space"),
        ("a\r\nx-injected: 1", "control"), ("a\0b", "control"), ("a\u{7F}b", "control"), ("a\u{1B}b", "control"),
        ("\u{85}a", "invisible"), ("a\u{85}", "invisible"), ("a\u{2028}", "invisible"), ("\u{FEFF}a", "invisible"),
        ("a\u{202E}b", "invisible"), ("a\u{A0}", "invisible"), ("a\u{200B}b", "invisible"), ("a\u{3000}", "invisible"),
        ("a\u{9C}b", "invisible"),
    ])
    func everythingElseIsRefusedWithItsReason(value: String, reason: String) {
        let problem = HeaderFieldValue.problem(value)
        #expect(problem?.contains(reason) == true, "\(String(reflecting: value)): \(problem ?? "nil")")
        #expect(!HeaderFieldValue.isValid(value))
    }

    @Test func theLengthIsCountedInBytes() {
        #expect(HeaderFieldValue.problem(String(repeating: "c", count: 65), maxBytes: 64)?.contains("65 bytes") == true)
        #expect(HeaderFieldValue.problem(String(repeating: "c", count: 65)) == nil)
    }
}
