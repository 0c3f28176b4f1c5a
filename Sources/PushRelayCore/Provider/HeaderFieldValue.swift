/// The rule for a header value a caller chooses (`apns-collapse-id` and the other `apns-*` values, a WebPush `Topic`):
/// what every HTTP/2 server accepts, so that no caller can make a provider reset the stream (RFC 9113 §8.2.1 makes a
/// value with a control character or a leading or trailing space malformed, and a reset counts against the provider's
/// circuit breaker as a provider failure).
///
/// A value passes when it is visible characters with spaces or tabs only between them: visible US-ASCII (VCHAR,
/// 0x21–0x7E), and letters, digits, marks, punctuation and symbols beyond ASCII as UTF-8 (RFC 9110's obs-text, which
/// RFC 9113 accepts), so that a Home Assistant `tag` such as "Küche" still collapses. Everything else is refused, not
/// repaired: empty values, leading or trailing SP or HTAB, control characters (CR, LF, NUL, DEL, C1), Unicode spaces
/// and line separators (U+00A0, U+0085, U+2028), and invisible format characters (the byte-order mark, zero-width
/// and bidi controls). Pure.
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
        for scalar in value.unicodeScalars where !scalar.isASCII || !isBlank(UInt8(scalar.value)) {
            if scalar.isASCII, !isVisible(UInt8(scalar.value)) {
                return
                    "contains a control character (0x\(String(scalar.value, radix: 16, uppercase: true))); only visible characters and inner spaces are allowed."
            }
            if !scalar.isASCII, !isVisibleBeyondASCII(scalar) {
                return
                    "contains an invisible character (U+\(String(scalar.value, radix: 16, uppercase: true))); only visible characters and inner spaces are allowed."
            }
        }
        return nil
    }

    /// Whether `value` passes `problem(_:maxBytes:)`.
    public static func isValid(_ value: String, maxBytes: Int? = nil) -> Bool {
        problem(value, maxBytes: maxBytes) == nil
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    private static func isVisible(_ byte: UInt8) -> Bool { byte >= 0x21 && byte <= 0x7E }

    /// A non-ASCII scalar that shows as a character: not a space, separator, control, format character or unassigned.
    private static func isVisibleBeyondASCII(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse:
            return false
        default:
            return !scalar.properties.isWhitespace
        }
    }
}
