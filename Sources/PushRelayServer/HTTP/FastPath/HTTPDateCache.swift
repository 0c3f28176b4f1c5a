import Foundation
import PushRelayCore

/// The `Date` header value, formatted once per second.
final class HTTPDateCache: Sendable {
    private let cache = Locked<(second: Int, value: String)>((-1, ""))

    func current() -> String {
        var t = time(nil)
        let second = Int(t)
        return cache.withLock { c in
            if c.second != second {
                var parts = tm()
                gmtime_r(&t, &parts)
                let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
                let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
                func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
                c.value =
                    "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                    + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
                c.second = second
            }
            return c.value
        }
    }
}
