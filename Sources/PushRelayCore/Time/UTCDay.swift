import Foundation

/// A UTC calendar day, independent of the server's time zone (computed from epoch seconds, no `Calendar`).
public struct UTCDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let dayNumber: Int64

    public init(dayNumber: Int64) { self.dayNumber = dayNumber }

    public init(_ date: Date) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        self.dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }

    /// Parses `YYYY-MM-DD`; nil for anything else or an impossible date.
    public init?(string: String) {
        let parts = string.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int64(parts[0]), let m = Int64(parts[1]), let d = Int64(parts[2]),
            (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        let n = UTCDay.daysFromCivil(year: y, month: m, day: d)
        let check = UTCDay(dayNumber: n).civil
        guard check.year == y, check.month == m, check.day == d else { return nil }
        self.dayNumber = n
    }

    /// Midnight UTC at the start of this day.
    public var start: Date { Date(timeIntervalSince1970: TimeInterval(dayNumber * 86_400)) }
    /// Midnight UTC at the end of this day: when a quota for this day resets.
    public var nextMidnight: Date { Date(timeIntervalSince1970: TimeInterval((dayNumber + 1) * 86_400)) }

    public func adding(days: Int64) -> UTCDay { UTCDay(dayNumber: dayNumber + days) }

    /// `YYYY-MM-DD`, the key used in SQLite.
    public var description: String {
        let c = civil
        guard (0...9999).contains(c.year) else { return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))" }
        return String(unsafeUninitializedCapacity: 10) { out in
            writeDate(c, out)
            return 10
        }
    }

    public static func < (a: UTCDay, b: UTCDay) -> Bool { a.dayNumber < b.dayNumber }

    var civil: (year: Int64, month: Int64, day: Int64) { UTCDay.civilFromDays(dayNumber) }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }
}

/// Writes `YYYY-MM-DD` (a year of four digits) at the start of `out`.
private func writeDate(_ c: (year: Int64, month: Int64, day: Int64), _ out: UnsafeMutableBufferPointer<UInt8>) {
    writeDigits(c.year, 4, out, at: 0)
    out[4] = UInt8(ascii: "-")
    writeDigits(c.month, 2, out, at: 5)
    out[7] = UInt8(ascii: "-")
    writeDigits(c.day, 2, out, at: 8)
}

/// Writes `v` (0 ≤ v < 10^width) as `width` decimal digits at `offset`.
private func writeDigits(_ v: Int64, _ width: Int, _ out: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
    var rest = v
    for i in stride(from: offset + width - 1, through: offset, by: -1) {
        out[i] = UInt8(ascii: "0") + UInt8(rest % 10)
        rest /= 10
    }
}

private func pad(_ v: Int64, _ width: Int) -> String {
    let s = String(v)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}

/// ISO-8601 timestamps in UTC with milliseconds and `Z`, as Home Assistant parses `resetsAt`.
public enum ISO8601UTC {
    /// Parses what `string(_:)` writes (`YYYY-MM-DDTHH:MM:SS.mmmZ`, milliseconds optional).
    public static func date(_ text: String) -> Date? {
        let u = Array(text.utf8)
        guard u.count >= 20, u[10] == UInt8(ascii: "T"), u.last == UInt8(ascii: "Z"),
            let day = UTCDay(string: String(decoding: u[0..<10], as: UTF8.self)),
            let h = Int(String(decoding: u[11..<13], as: UTF8.self)), let m = Int(String(decoding: u[14..<16], as: UTF8.self)),
            let s = Int(String(decoding: u[17..<19], as: UTF8.self)), h < 24, m < 60, s < 61
        else { return nil }
        var millis = 0
        if u.count > 20, u[19] == UInt8(ascii: ".") {
            guard let ms = Int(String(decoding: u[20..<(u.count - 1)], as: UTF8.self)) else { return nil }
            millis = ms
        }
        let seconds = Double(day.dayNumber * 86_400 + Int64(h * 3600 + m * 60 + s)) + Double(millis) / 1000
        return Date(timeIntervalSince1970: seconds)
    }

    /// e.g. `2026-11-22T00:00:00.000Z`.
    public static func string(_ date: Date) -> String {
        let totalMillis = date.epochMilliseconds
        let millis = ((totalMillis % 1000) + 1000) % 1000
        let seconds = (totalMillis - millis) / 1000
        let day = UTCDay(dayNumber: seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secOfDay = seconds - day.dayNumber * 86_400
        let c = day.civil
        guard (0...9999).contains(c.year) else {
            return "\(day)T\(pad(secOfDay / 3600, 2)):\(pad(secOfDay / 60 % 60, 2)):\(pad(secOfDay % 60, 2)).\(pad(millis, 3))Z"
        }
        // Written in place: string interpolation of the seven fields cost more than the rest of the request's date
        // handling together (every notification stamps its usage row and its log row).
        return String(unsafeUninitializedCapacity: 24) { out in
            writeDate(c, out)
            out[10] = UInt8(ascii: "T")
            writeDigits(secOfDay / 3600, 2, out, at: 11)
            out[13] = UInt8(ascii: ":")
            writeDigits(secOfDay / 60 % 60, 2, out, at: 14)
            out[16] = UInt8(ascii: ":")
            writeDigits(secOfDay % 60, 2, out, at: 17)
            out[19] = UInt8(ascii: ".")
            writeDigits(millis, 3, out, at: 20)
            out[23] = UInt8(ascii: "Z")
            return 24
        }
    }
}
