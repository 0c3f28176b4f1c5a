import Logging

/// The id of the request being served, carried by every log line written while serving it (as `request_id`) and
/// echoed to the client as `X-Request-Id`.
///
/// A client's own `X-Request-Id` is kept when it is a plain token (1–128 of `A-Z a-z 0-9 - _ . : /`, what proxies and
/// tracing systems send), so a line in PushRelay's log can be matched with the proxy's; anything else (control
/// characters, quotes, overlong values: a way to forge log lines) is replaced by a fresh id.
public enum RequestID {
    /// The current request's id, bound for the task serving it (and the tasks it starts).
    @TaskLocal public static var current: String?

    /// Adds `request_id` to every log line written while a request is being served.
    public static let metadataProvider = Logger.MetadataProvider {
        guard let id = current else { return [:] }
        return ["request_id": .string(id)]
    }

    static let maxLength = 128

    /// The id for a request that arrived with `header` (the value of its `X-Request-Id`, if any).
    public static func accept(_ header: String?) -> String {
        if let header, isAcceptable(header) { return header }
        return make()
    }

    static func isAcceptable(_ value: String) -> Bool {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        return utf8.allSatisfy { c in
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "/"):
                true
            default:
                false
            }
        }
    }

    /// A fresh id: 16 random hexadecimal digits.
    public static func make() -> String {
        let n = UInt64.random(in: .min ... .max)
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
