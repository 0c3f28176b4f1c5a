import Foundation
import PushRelayCore

/// The `Date` header value (RFC 9110's IMF-fixdate) of the server's time port, formatted once per second.
final class HTTPDateCache: Sendable {
    private let clock: any TimePort
    private let cache = Locked<(second: Int, value: String)>((Int.min, ""))

    init(clock: any TimePort) {
        self.clock = clock
    }

    func current() -> String {
        let second = Int(clock.now().timeIntervalSince1970.rounded(.down))
        return cache.withLock { c in
            if c.second != second {
                c.value = Self.format(second)
                c.second = second
            }
            return c.value
        }
    }

    /// `second` (since 1970, UTC) as `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ second: Int) -> String {
        var t = time_t(second)
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
