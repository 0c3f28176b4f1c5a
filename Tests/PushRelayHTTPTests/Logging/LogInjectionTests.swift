import Foundation
import Logging
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayHTTP
import PushRelayPushChannel
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// A caller's value in a log event (a Matrix `app_id`, a header, a token) cannot forge a log line: in both formats one
/// event is exactly one line, whatever control characters its message, metadata or error hold. Webhook ids, secrets
/// like push tokens, are shortened in logs.
@Suite struct LogInjectionTests {
    /// Collects what a `StreamLogHandler` writes.
    final class Written: Sendable {
        let chunks = Locked<[String]>([])
        var text: String { chunks.withLock { $0.joined() } }
        var stream: Stream { Stream(written: self) }

        struct Stream: TextOutputStream, Sendable {
            let written: Written
            mutating func write(_ string: String) { written.chunks.withLock { $0.append(string) } }
        }
    }

    struct Forged: Error, CustomStringConvertible {
        var description: String { "broken\n2026-11-25T12:00:00+0000 critical pushrelay: [PushRelayServer] error forged" }
    }

    static let forgedLine = "2026-11-25T12:00:00+0000 critical pushrelay: [PushRelayServer] forged"
    /// Values an attacker might send: a forged line after LF, CR LF or CR alone, a terminal escape, NUL, DEL, NEL and
    /// the Unicode line separator.
    static let hostile = [
        "x\n\(forgedLine)", "x\r\n\(forgedLine)", "x\r\(forgedLine)", "\u{1B}[2K\u{1B}[1Gred", "nul\u{0}del\u{7F}", "nel\u{85}",
        "ls\u{2028}ps\u{2029}", "tab\there", "quote\" back\\slash",
    ]

    static func textLogger(_ written: Written, provider: Logger.MetadataProvider? = nil) -> Logger {
        var logger = Logger(label: "pushrelay") { label in
            TextLogHandler(StreamLogHandler(label: label, stream: written.stream, metadataProvider: nil), metadataProvider: provider)
        }
        logger.logLevel = .trace
        return logger
    }

    @Test func controlCharactersAreEscaped() {
        #expect(LogText.escaped("a\nb\rc\td") == "a\\nb\\rc\\td")
        #expect(
            LogText.escaped("\u{0}\u{1B}\u{1F}\u{7F}\u{85}\u{9F}\u{2028}\u{2029}") == "\\u{0}\\u{1B}\\u{1F}\\u{7F}\\u{85}\\u{9F}\\u{2028}\\u{2029}"
        )
        // Characters that share lead bytes with the escaped ones stay as they are.
        for plain in ["abcdef…uvwxyz", "a ↔ b", "\u{A0}é日本", "\u{2027}\u{2030}\u{2065}\u{206A}\u{200D}", "back\\slash \"quoted\"", ""] {
            #expect(!LogText.needsEscaping(plain), "\(plain)")
            #expect(LogText.escaped(plain) == plain)
        }
        for value in Self.hostile where !value.hasPrefix("quote") {
            #expect(LogText.needsEscaping(value), "\(value.debugDescription)")
            let escaped = LogText.escaped(value)
            #expect(
                !escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
            )
        }
    }

    /// The bidirectional controls (which make a terminal show a line's text in another order than it was written).
    static let bidi: [Unicode.Scalar] =
        ["\u{200E}", "\u{200F}"] + (0x202A...0x202E).map { Unicode.Scalar($0)! } + (0x2066...0x2069).map { Unicode.Scalar($0)! }

    @Test func bidirectionalControlsAreEscaped() {
        for scalar in Self.bidi {
            let value = "admin\(scalar)nimda"
            #expect(LogText.needsEscaping(value), "\(value.debugDescription)")
            #expect(LogText.escaped(value) == "admin\\u{\(String(scalar.value, radix: 16, uppercase: true))}nimda")
        }
    }

    @Test func aTextValueWithSpacesIsQuotedAndCannotPoseAsMorePairs() throws {
        let written = Written()
        let logger = Self.textLogger(written)
        let forged = "x request_id=forged level=critical"
        logger.info(
            "unknown app_id",
            metadata: [
                "app_id": .string(forged), "quoted": "say \"hi\" \\o/", "nbsp": "a\u{A0}b", "empty": "", "plain": "p",
                "key with space": "v", "described": .stringConvertible(forged), "bidi": .string("a\u{202E} b"),
            ]
        )
        let line = try #require(written.text.split(separator: "\n").first)
        #expect(line.contains(#"app_id="x request_id=forged level=critical""#), "\(line)")
        #expect(line.contains(#"described="x request_id=forged level=critical""#), "\(line)")
        #expect(line.contains(#"quoted="say \"hi\" \\o/""#), "\(line)")
        #expect(line.contains("nbsp=\"a\u{A0}b\""), "any Unicode space is quoted: \(line)")
        #expect(line.contains(#"empty="""#), "\(line)")
        #expect(line.contains(" plain=p "), "a value without spaces is written as it is: \(line)")
        #expect(line.contains(#""key with space"=v"#), "\(line)")
        #expect(line.contains(#"bidi="a\u{202E} b""#), "\(line)")
        // Every pair the line holds is one the event had: nothing was forged.
        #expect(Self.keys(of: line) == [#""key with space""#, "app_id", "bidi", "described", "empty", "nbsp", "plain", "quoted"], "\(line)")
    }

    /// The keys of a text line's `key=value` pairs, read as a log parser would: fields split at spaces outside quotes
    /// (where `\` escapes the next character), up to the `[Source]` field.
    static func keys(of line: Substring) -> [String] {
        guard let start = line.range(of: ": ")?.upperBound else { return [] }
        var fields: [String] = []
        var current = ""
        var quoted = false
        var escaping = false
        for c in line[start...] {
            if escaping {
                escaping = false
            } else if quoted, c == "\\" {
                escaping = true
            } else if c == "\"" {
                quoted.toggle()
            } else if c == " ", !quoted {
                if current.hasPrefix("[") { break }
                fields.append(current)
                current = ""
                continue
            }
            current.append(c)
        }
        return fields.map { field in
            var inQuotes = false
            var key = ""
            for c in field {
                if c == "\"" { inQuotes.toggle() }
                if c == "=", !inQuotes { break }
                key.append(c)
            }
            return key
        }
    }

    @Test func aJSONLineEscapesInvisibleCharactersAndKeepsTheValue() throws {
        let lines = JSONLogHandlerTests.Lines()
        let logger = Logger(label: "pushrelay") { label in JSONLogHandler(label: label, output: lines.output, metadataProvider: nil) }
        let values = Self.bidi.map { "a\($0)b" } + ["nel\u{85}", "ls\u{2028}ps\u{2029}", "plain é ↔ …"]
        for value in values { logger.info("m \(value)", metadata: ["v": .string(value)]) }
        let raw = lines.all.withLock { $0 }
        let objects = try lines.objects()
        #expect(raw.count == values.count && objects.count == values.count)
        for (line, (value, o)) in zip(raw, zip(values, objects)) {
            #expect(o["v"] == .string(value), "the same value to a JSON parser")
            #expect(o["message"] == .string("m \(value)"))
            let escapedHere = value.unicodeScalars.contains { $0.value >= 0x80 && LogText.isEscaped($0.value) }
            #expect(!line.unicodeScalars.contains { $0.value >= 0x80 && LogText.isEscaped($0.value) }, "\(line)")
            #expect(line.contains("\\u") == escapedHere, "\(line)")
        }
    }

    @Test func aTextLineWithNewlinesInMessageAndMetadataStaysOneLine() throws {
        let written = Written()
        let provider = Logger.MetadataProvider { ["request_id": "req\nforged"] }
        var logger = Self.textLogger(written, provider: provider)
        logger[metadataKey: "handler\nkey"] = "handler\rvalue"
        for value in Self.hostile {
            logger.critical(
                "unknown app_id \(value)",
                metadata: [
                    "app_id": .string(value), "key\n\(Self.forgedLine)": "v", "list": [.string(value)], "dict": ["k\n": .string(value)],
                    "described": .stringConvertible(value),
                ]
            )
        }
        logger.error("with an error", error: Forged())
        let lines = written.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == Self.hostile.count + 2, "one line an event, then the final newline: \(written.text)")
        #expect(lines.last == "")
        for line in lines.dropLast() {
            #expect(!line.contains("\r") && !line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x2028 }, "\(line)")
            #expect(line.contains("request_id=req\\nforged"), "\(line)")
            #expect(line.contains("handler\\nkey=handler\\rvalue"), "\(line)")
        }
        let first = try #require(lines.first)
        #expect(first.contains("unknown app_id x\\n\(Self.forgedLine)"), "\(first)")
        // The forged line holds spaces: the value and the key are quoted.
        #expect(first.contains("app_id=\"x\\n\(Self.forgedLine)\""), "\(first)")
        #expect(first.contains("\"key\\n\(Self.forgedLine)\"=v"), "\(first)")
        #expect(lines[1].contains("x\\r\\n\(Self.forgedLine)"), "\(lines[1])")
        let errorLine = lines[lines.count - 2]
        #expect(errorLine.contains("error.message=\"broken\\n2026-11-25"), "\(errorLine)")
        #expect(errorLine.contains("error.type=\(String(reflecting: Forged.self))"), "\(errorLine)")
    }

    /// Lines without anything to escape are swift-log's `StreamLogHandler` lines, as before.
    @Test func aCleanTextLineIsStreamLogHandlersLine() {
        let escaped = Written()
        let plain = Written()
        let provider = Logger.MetadataProvider { ["request_id": "req-1"] }
        var a = Self.textLogger(escaped, provider: provider)
        var b = Logger(label: "pushrelay") { label in StreamLogHandler(label: label, stream: plain.stream, metadataProvider: provider) }
        a[metadataKey: "instance"] = "a"
        b[metadataKey: "instance"] = "a"
        for logger in [a, b] {
            logger.info("moved abcdef…uvwxyz ↔ é", metadata: ["token": "abcdef…uvwxyz", "n": .stringConvertible(3), "l": ["x", "y"]])
            logger.info("no event metadata")
        }
        // The time (the first field) may differ by a second.
        func withoutTime(_ text: String) -> [Substring] { text.split(separator: "\n").map { $0.drop { $0 != " " } } }
        #expect(withoutTime(escaped.text) == withoutTime(plain.text), "\(escaped.text)\n\(plain.text)")
        #expect(withoutTime(escaped.text).count == 2)
    }

    @Test func theTextFormatOfTheServerEscapes() {
        var handler = LogFormat.text.standardErrorHandler(label: "pushrelay", level: .notice, metadataProvider: nil)
        #expect(handler is TextLogHandler)
        #expect(handler.logLevel == .notice)
        handler.logLevel = .debug
        #expect(handler.logLevel == .debug)
    }

    @Test func aJSONLineStaysOneValidObjectAndKeepsTheValues() throws {
        let lines = JSONLogHandlerTests.Lines()
        let provider = Logger.MetadataProvider { ["request_id": "req\nforged"] }
        let logger = Logger(label: "pushrelay") { label in JSONLogHandler(label: label, output: lines.output, metadataProvider: provider) }
        for value in Self.hostile {
            logger.critical(
                "unknown app_id \(value)",
                metadata: ["app_id": .string(value), "key\n\(value)": "v", "list": [.string(value)], "dict": ["k\n": .string(value)]]
            )
        }
        logger.error("with an error", error: Forged())
        let raw = lines.all.withLock { $0 }
        #expect(raw.count == Self.hostile.count + 1)
        let objects = try lines.objects()  // each raw line: one newline, at its end, and one JSON object
        for (line, (value, o)) in zip(raw, zip(Self.hostile, objects)) {
            // A second parser agrees.
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(parsed["app_id"] as? String == value)
            #expect(!line.dropLast().unicodeScalars.contains { $0.value < 0x20 }, "\(line)")
            #expect(o["message"] == .string("unknown app_id \(value)"))
            #expect(o["app_id"] == .string(value))
            #expect(o["key\n\(value)"] == "v")
            #expect(o["list"] == [.string(value)])
            #expect(o["dict"] == ["k\n": .string(value)])
            #expect(o["request_id"] == "req\nforged")
        }
        #expect(objects.last?["error"] == .string(Forged().description))
    }

    @Test func webhookIDsAreShortenedInBindingLogs() async throws {
        let token = "binding-push-token:" + String(repeating: "t", count: 40)
        let first = String(repeating: "a1b2", count: 16)
        let second = String(repeating: "c3d4", count: 16)
        #expect(
            PushChannelBinding(pushToken: token, webhookID: first).description == "\(TokenDisplay.short(token)) ↔ \(TokenDisplay.short(first))"
        )

        let db = try PushRelayDatabase(path: TempPath.make())
        defer { try? db.close() }
        try db.migrate()
        let capture = LogCapture()
        let registry = PushChannelBindingRegistry(
            store: SQLitePushChannelStore(database: db),
            clock: EventLoopClock(),
            logger: capture.logger(label: "test")
        )
        #expect(await registry.observe(PushChannelBinding(pushToken: token, webhookID: first)) == [])
        // A re-registration (same token, new webhook id) moves the binding, at `info`.
        let replaced = await registry.observe(PushChannelBinding(pushToken: token, webhookID: second))
        #expect(replaced == [PushChannelBinding(pushToken: token, webhookID: first)])
        let moved = capture.lines.filter { $0.text.contains("moved a channel binding") }
        #expect(moved.count == 1)
        #expect(moved.first?.level == .info)
        #expect(moved.first?.text.contains(TokenDisplay.short(first)) == true, "\(moved)")
        #expect(moved.first?.text.contains(TokenDisplay.short(second)) == true, "\(moved)")
        capture.expectNoLeaks(of: [token, first, second])
    }
}
