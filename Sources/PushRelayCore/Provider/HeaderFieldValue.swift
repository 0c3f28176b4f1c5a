/// The rule for a header value a caller chooses (`apns-collapse-id` and the other `apns-*` values, a WebPush `Topic`):
/// what every HTTP/2 server accepts, so that no caller can make a provider reset the stream (RFC 9113 §8.2.1 makes a
/// value with a control character or a leading or trailing space malformed, and a reset counts against the provider's
/// circuit breaker as a provider failure).
///
/// A value passes when it is visible US-ASCII (VCHAR, 0x21–0x7E) with spaces or tabs only between visible characters.
/// Everything else is refused, not repaired: empty values, leading or trailing SP or HTAB, control characters (CR, LF,
/// NUL, DEL…), and every non-ASCII character, Unicode spaces and line separators (U+0085, U+2028), the byte-order mark
/// and bidi controls included. Pure.
public enum HeaderFieldValue {
    /// Why `value` cannot be sent as a header value, as a phrase that follows the header's name ("is empty."), or nil
    /// when it can. `maxBytes` bounds its length in bytes when given.
    public static func problem(_ value: String, maxBytes: Int? = nil) -> String? {
        let bytes = value.utf8
        guard let first = bytes.first, let last = bytes.last else { return "is empty." }
        if let maxBytes, bytes.count > maxBytes {
            return "is \(bytes.count) bytes; at most \(maxBytes) are allowed."
        }
        if isBlank(first) || isBlank(last) {
            return "starts or ends with a space or tab (RFC 9113 §8.2.1)."
        }
        if let bad = bytes.first(where: { !isBlank($0) && !isVisible($0) }) {
            return bad >= 0x80
                ? "contains a non-ASCII character; only visible ASCII characters and inner spaces are allowed."
                : "contains a control character (0x\(String(bad, radix: 16, uppercase: true))); only visible ASCII characters and inner spaces are allowed."
        }
        return nil
    }

    /// Whether `value` passes `problem(_:maxBytes:)`.
    public static func isValid(_ value: String, maxBytes: Int? = nil) -> Bool {
        problem(value, maxBytes: maxBytes) == nil
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    private static func isVisible(_ byte: UInt8) -> Bool { byte >= 0x21 && byte <= 0x7E }
}
