import Foundation
import Logging
import PushRelayCore

/// Writes each log event as one JSON object on one line:
/// `{"time":"2026-11-25T12:00:00.123Z","level":"info","label":"pushrelay","source":"PushRelayServer","message":"…","request_id":"…"}`.
///
/// The fixed fields come first, then the metadata sorted by key (the metadata provider's, then the logger's, then the
/// event's, later ones winning), then `error` when the event carries one. Metadata values are strings; lists and
/// dictionaries are written as JSON arrays and objects. The C1 controls, the line and paragraph separators and the
/// bidirectional controls are written as `\uXXXX` escapes (`LogText.jsonEscapingInvisibles`). A line is written with
/// one `write(2)` call, so lines from different threads never interleave.
public struct JSONLogHandler: LogHandler {
    /// Where lines go.
    public struct Output: Sendable {
        package let write: @Sendable ([UInt8]) -> Void

        /// A closure that receives each line's bytes, newline included (tests collect lines this way).
        public init(_ write: @escaping @Sendable ([UInt8]) -> Void) { self.write = write }

        public static let standardError = Output { bytes in
            bytes.withUnsafeBufferPointer { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = Foundation.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                    if n <= 0 {
                        if n < 0 && errno == EINTR { continue }
                        return
                    }
                    offset += n
                }
            }
        }
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    private let label: String
    private let output: Output

    public init(label: String, output: Output, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadataProvider?.get() ?? [:]
        for (k, v) in metadata { all[k] = v }
        for (k, v) in event.metadata ?? [:] { all[k] = v }
        output.write(Self.line(event: event, label: label, metadata: all, time: Date()))
    }

    /// The keys every line starts with; metadata of the same name is left out.
    private static let fixedKeys: Set<String> = ["time", "level", "label", "source", "message"]

    /// The line for one event, newline included. The fixed keys win over metadata of the same name.
    package static func line(event: LogEvent, label: String, metadata: Logger.Metadata, time: Date) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        var first = true
        func field(_ key: String, _ value: JSONValue) {
            out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            first = false
            JSONWriter.write(.string(key), into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        field("time", .string(Self.timestamp(time)))
        field("level", .string(event.level.rawValue))
        field("label", .string(label))
        field("source", .string(event.source))
        field("message", .string(event.message.description))
        // An `error` in the metadata (how most of PushRelay's lines carry one) is kept unless the event has its own.
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) where !fixedKeys.contains(key) && !(key == "error" && event.error != nil) {
            field(key, Self.json(value))
        }
        if let error = event.error { field("error", .string(String(describing: error))) }
        out.append(UInt8(ascii: "}"))
        out.append(UInt8(ascii: "\n"))
        return LogText.jsonEscapingInvisibles(out)
    }

    package static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .stringConvertible(let c): .string(c.description)
        case .array(let a): .array(a.map(json))
        case .dictionary(let d): .object(d.mapValues(json))
        }
    }

    /// UTC, milliseconds: `2026-11-25T12:00:00.123Z`.
    package static func timestamp(_ date: Date) -> String {
        let ms = date.epochMilliseconds
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ms % 1000), 3))Z"
    }
}
