import Foundation

/// The `Retry-After` response header (RFC 9110 §10.2.3): delay seconds or an HTTP date.
enum RetryAfter {
    /// Whole seconds to wait, or nil when absent or unreadable. Negative and absurd values are clamped to 0…86400.
    static func seconds(_ value: String?, now: Date) -> Int? {
        guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
        if let s = Int(raw) { return min(max(s, 0), 86_400) }
        guard let date = httpDate(raw) else { return nil }
        let delta = date.timeIntervalSince(now).rounded(.up)
        guard delta.isFinite else { return nil }
        return Int(min(max(delta, 0), 86_400))
    }

    /// IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ s: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: s)
    }
}
