import Foundation
import Testing

@testable import PushRelayCore

@Suite struct UTCDayTests {
    @Test func dayIsUTCWhateverTheTimeZone() {
        // 2026-11-21T23:59:59Z and 2026-11-22T00:00:00Z straddle midnight UTC.
        let before = Date(timeIntervalSince1970: 1_795_305_599)
        let after = Date(timeIntervalSince1970: 1_795_305_600)
        #expect(UTCDay(before).description == "2026-11-21")
        #expect(UTCDay(after).description == "2026-11-22")
        #expect(ISO8601UTC.string(UTCDay(before).nextMidnight) == "2026-11-22T00:00:00.000Z")
    }

    @Test func isoStringsCarryMilliseconds() {
        #expect(ISO8601UTC.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601UTC.string(Date(timeIntervalSince1970: 951_782_400.123)) == "2000-02-29T00:00:00.123Z")
        #expect(ISO8601UTC.string(Date(timeIntervalSince1970: 1_795_012_345.678)) == "2026-11-18T14:32:25.678Z")
        #expect(ISO8601UTC.string(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
    }

    @Test func parsesAndRejectsDays() {
        #expect(UTCDay(string: "2024-02-29")?.description == "2024-02-29")
        #expect(UTCDay(string: "2023-02-29") == nil)
        #expect(UTCDay(string: "2026-13-01") == nil)
        #expect(UTCDay(string: "2026-1-01") == nil)
        #expect(UTCDay(string: "yesterday") == nil)
        #expect(UTCDay(string: "2026-11-21")!.adding(days: 10).description == "2026-12-01")
    }

    @Test func civilConversionRoundTripsAcrossCenturies() {
        for n in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let d = UTCDay(dayNumber: n)
            #expect(UTCDay(string: d.description)?.dayNumber == n || d.civil.year < 0 || d.civil.year > 9999)
        }
    }
}
