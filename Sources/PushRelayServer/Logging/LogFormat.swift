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
        escaped.metadata = LogText.escaped(all)
        escaped.error = nil
        inner.log(event: escaped)
    }
}

/// Text safe to put on one log line.
enum LogText {
    /// `text` with every character that could end or rewrite a line written as an escape: `\n`, `\r`, `\t`, and
    /// `\u{XX}` for the other C0 controls, DEL, the C1 controls (NEL among them) and the Unicode line and paragraph
    /// separators. Everything else, backslashes included, is kept as it is.
    static func escaped(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `text` holds a character `escaped` rewrites, judged on its UTF-8 bytes: a C0 control or DEL (one byte),
    /// a C1 control (`C2 80`–`C2 9F`), U+2028 or U+2029 (`E2 80 A8`, `E2 80 A9`).
    static func needsEscaping(_ text: String) -> Bool {
        var previous: UInt8 = 0
        var beforePrevious: UInt8 = 0
        for b in text.utf8 {
            if b < 0x20 || b == 0x7F { return true }
            if previous == 0xC2, b <= 0x9F, b >= 0x80 { return true }
            if beforePrevious == 0xE2, previous == 0x80, b == 0xA8 || b == 0xA9 { return true }
            beforePrevious = previous
            previous = b
        }
        return false
    }

    /// `metadata` with every key and every string in its values escaped; values become strings, lists and
    /// dictionaries.
    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var out: Logger.Metadata = [:]
        for (key, value) in metadata { out[escaped(key)] = escaped(value) }
        return out
    }

    static func escaped(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let s): .string(escaped(s))
        case .stringConvertible(let c): .string(escaped(c.description))
        case .array(let a): .array(a.map(escaped))
        case .dictionary(let d): .dictionary(escaped(d))
        }
    }
}
