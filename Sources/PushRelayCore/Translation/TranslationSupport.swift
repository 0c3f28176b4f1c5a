import Foundation

/// Small value conversions shared by the translations (FCM HTTP v1 wire spelling).
enum FCMFormat {
    /// FCM's maximum message lifetime (4 weeks); longer TTLs are clamped to it rather than rejected by FCM.
    static let maxTTLSeconds: Double = 2_419_200

    /// A Home Assistant `ttl` (seconds, as a number or numeric string; `"3600s"` is accepted too) as an FCM v1
    /// duration string such as `"0s"`, `"3600s"` or `"1.5s"`. Nil for anything that is not a non-negative number.
    static func duration(_ value: JSONValue) -> String? {
        let seconds: Double
        switch value {
        case .int(let i): seconds = Double(i)
        case .double(let d): seconds = d
        case .string(var s):
            s = s.trimmingCharacters(in: .whitespaces)
            if s.hasSuffix("s") { s.removeLast() }
            guard !s.isEmpty, let d = Double(s) else { return nil }
            seconds = d
        default: return nil
        }
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let clamped = min(seconds, maxTTLSeconds)
        if clamped == clamped.rounded(.towardZero) {
            return "\(Int64(clamped))s"
        }
        // Fractional seconds: at most 9 digits (nanoseconds), trailing zeros trimmed.
        var text = String(format: "%.9f", clamped)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text + "s"
    }

    /// An Android priority as FCM v1 accepts it (`"high"` / `"normal"`); nil for anything else.
    static func androidPriority(_ value: JSONValue) -> String? {
        guard let s = value.stringValue?.lowercased() else { return nil }
        return s == "high" || s == "normal" ? s : nil
    }

    /// A string-only FCM `data` map: nulls dropped, everything else in its `fcmDataString` form.
    static func stringMap(_ object: [String: JSONValue]) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (k, v) in object where v != .null {
            out[k] = .string(v.fcmDataString)
        }
        return out
    }

    /// Normalises a passed-through FCM `android` block: `ttl` becomes a duration string (dropped when not numeric)
    /// and `priority` lower-case `high`/`normal` (dropped otherwise). Other fields are left to FCM, whose JSON
    /// parser accepts both camelCase and snake_case field names.
    static func normalizeAndroidConfig(_ config: [String: JSONValue]) -> [String: JSONValue] {
        var c = config
        if let ttl = c["ttl"] { c["ttl"] = duration(ttl).map(JSONValue.string) }
        if let p = c["priority"] { c["priority"] = androidPriority(p).map(JSONValue.string) }
        if let d = c["data"]?.objectValue { c["data"] = .object(stringMap(d)) }
        return c
    }
}
