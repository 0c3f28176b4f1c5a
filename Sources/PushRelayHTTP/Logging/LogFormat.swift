import Logging

/// How the server writes its log lines (`log.format`).
public enum LogFormat: String, Sendable {
    /// swift-log's readable line: time, level, label, metadata, message, with control characters escaped
    /// (`TextLogHandler`).
    case text
    /// One JSON object a line (`JSONLogHandler`), for log shippers.
    case json

    /// A handler of this format writing to standard error at `level`. Every line carries what `metadataProvider`
    /// supplies (the request id of the request being served: `RequestID.metadataProvider`).
    public func standardErrorHandler(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) -> any LogHandler {
        switch self {
        case .text:
            var handler = TextLogHandler(StreamLogHandler.standardError(label: label, metadataProvider: nil), metadataProvider: metadataProvider)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label, output: .standardError, metadataProvider: metadataProvider)
            handler.logLevel = level
            return handler
        }
    }
}

/// swift-log's `StreamLogHandler` line (`2026-11-25T12:00:00+0000 info pushrelay: key=value [Source] message`), with
/// every control character in the message, the metadata keys and values and the error escaped (`LogText.escaped`),
/// so one log event is always exactly one line: a caller's value holding a newline cannot forge a line of its own.
/// A metadata key or value holding a space or a quote is written in quotes (`LogText.field`), so it cannot pose as
/// further `key=value` pairs either.
///
/// Metadata is merged as `StreamLogHandler` merges it (the handler's, then the provider's, then the event's, later
/// ones winning; an event's error as `error.message` and `error.type`) and handed to the wrapped handler escaped.
public struct TextLogHandler: LogHandler {
    private var inner: StreamLogHandler
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// Writes through `inner`, which should have no metadata provider of its own (its values would not be escaped).
    public init(_ inner: StreamLogHandler, metadataProvider: Logger.MetadataProvider?) {
        self.inner = inner
        self.metadataProvider = metadataProvider
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        for (k, v) in metadataProvider?.get() ?? [:] { all[k] = v }
        for (k, v) in event.metadata ?? [:] { all[k] = v }
        if let error = event.error {
            all["error.message"] = .string("\(error)")
            all["error.type"] = .string(String(reflecting: type(of: error)))
        }
        var escaped = event
        escaped.message = Logger.Message(stringLiteral: LogText.escaped(event.message.description))
        escaped.metadata = LogText.fields(all)
        escaped.error = nil
        inner.log(event: escaped)
    }
}

/// Text safe to put on one log line.
package enum LogText {
    /// `text` with every character that could end, rewrite or visually reorder a line written as an escape: `\n`,
    /// `\r`, `\t`, and `\u{XX}` for the other C0 controls, DEL, the C1 controls (NEL among them), the Unicode line and
    /// paragraph separators and the bidirectional controls (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which make
    /// a terminal show a line's text in another order than it was written. Everything else, backslashes included, is
    /// kept as it is.
    package static func escaped(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case let v where isEscaped(v): out += "\\u{" + String(v, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `escaped` writes the scalar `v` as `\u{XX}`.
    package static func isEscaped(_ v: UInt32) -> Bool {
        switch v {
        case 0x00..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Whether `text` holds a character `escaped` rewrites, judged on its UTF-8 bytes: a C0 control or DEL (one byte),
    /// a C1 control (`C2 80`–`C2 9F`), U+200E, U+200F or U+2028–U+202E (`E2 80 8E`, `E2 80 8F`, `E2 80 A8`–`AE`),
    /// U+2066–U+2069 (`E2 81 A6`–`A9`).
    package static func needsEscaping(_ text: String) -> Bool { needsEscaping(text.utf8, ascii: true) }

    /// `needsEscaping` on UTF-8 bytes, the one-byte controls only if `ascii`.
    private static func needsEscaping(_ bytes: some Sequence<UInt8>, ascii: Bool) -> Bool {
        var previous: UInt8 = 0
        var beforePrevious: UInt8 = 0
        for b in bytes {
            if ascii, b < 0x20 || b == 0x7F { return true }
            if previous == 0xC2, b <= 0x9F, b >= 0x80 { return true }
            if beforePrevious == 0xE2 {
                if previous == 0x80, b == 0x8E || b == 0x8F || (0xA8...0xAE).contains(b) { return true }
                if previous == 0x81, (0xA6...0xA9).contains(b) { return true }
            }
            beforePrevious = previous
            previous = b
        }
        return false
    }

    /// A metadata key or value as the text line writes it between spaces: `escaped`, and in double quotes, with `"`
    /// and `\` inside written `\"` and `\\`, when it is empty or holds whitespace `escaped` keeps (a space, any Unicode
    /// space), a quote or, for a key, `=`, so that it reads as one field whatever a caller put in it.
    package static func field(_ text: String, isKey: Bool = false) -> String {
        let needsQuotes =
            text.isEmpty
            || text.unicodeScalars.contains { ($0.properties.isWhitespace && !isEscaped($0.value)) || $0 == "\"" || (isKey && $0 == "=") }
        guard needsQuotes else { return escaped(text) }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out += escaped(String(scalar))
            }
        }
        return out + "\""
    }

    /// `metadata` as the text line writes it: keys and string values as `field` writes them; the strings in lists and
    /// dictionaries escaped (swift-log quotes those already).
    package static func fields(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var out: Logger.Metadata = [:]
        for (key, value) in metadata {
            switch value {
            case .string(let s): out[field(key, isKey: true)] = .string(field(s))
            case .stringConvertible(let c): out[field(key, isKey: true)] = .string(field(c.description))
            case .array, .dictionary: out[field(key, isKey: true)] = escaped(value)
            }
        }
        return out
    }

    /// A JSON log line with every character `escaped` rewrites that JSON leaves as it is (the C1 controls, the line and
    /// paragraph separators, the bidirectional controls) written as a JSON `\uXXXX` escape: the same value to a JSON
    /// parser, and no hidden reordering or line break to someone reading the raw line. Such characters can only
    /// stand inside the line's strings, where the escape is valid.
    static func jsonEscapingInvisibles(_ line: [UInt8]) -> [UInt8] {
        guard needsEscaping(line, ascii: false) else { return line }
        var out: [UInt8] = []
        out.reserveCapacity(line.count + 16)
        for scalar in String(decoding: line, as: UTF8.self).unicodeScalars {
            if scalar.value >= 0x80, isEscaped(scalar.value) {
                let hex = String(scalar.value, radix: 16)
                out += Array("\\u".utf8) + Array(repeating: UInt8(ascii: "0"), count: 4 - hex.utf8.count) + Array(hex.utf8)
            } else {
                out += Array(String(scalar).utf8)
            }
        }
        return out
    }

    /// `metadata` with every key and every string in its values escaped; values become strings, lists and
    /// dictionaries.
    package static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var out: Logger.Metadata = [:]
        for (key, value) in metadata { out[escaped(key)] = escaped(value) }
        return out
    }

    package static func escaped(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let s): .string(escaped(s))
        case .stringConvertible(let c): .string(escaped(c.description))
        case .array(let a): .array(a.map(escaped))
        case .dictionary(let d): .dictionary(escaped(d))
        }
    }
}
