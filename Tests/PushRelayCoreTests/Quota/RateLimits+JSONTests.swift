import PushRelayCore
import Testing

@Suite struct RateLimitsJSONTests {
    @Test func theFastWriterWritesWhatTheJSONWriterWritesOfTheObject() throws {
        let day = try #require(UTCDay(string: "2026-11-29"))
        let limits = RateLimits(counters: UsageCounters(attempts: 7, successful: 5, errors: 1), maximum: 150, day: day)
        var fast: [UInt8] = []
        limits.writeJSON(into: &fast)
        #expect(fast == JSONWriter.bytes(limits.json))
        #expect(
            String(decoding: fast, as: UTF8.self)
                == #"{"attempts":7,"errors":1,"maximum":150,"remaining":145,"resetsAt":"2026-11-30T00:00:00.000Z","successful":5,"total":6}"#
        )
    }
}
