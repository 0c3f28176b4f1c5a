import PushRelayCore
import Testing

@testable import PushRelayServer

/// The 201 body writes `rateLimits` by hand (`writeJSON`); it must be byte for byte what JSONWriter makes of `json`,
/// the form every other answer carries.
@Suite struct RateLimitsJSONTests {
    @Test(arguments: [
        UsageCounters(),
        UsageCounters(attempts: 7, successful: 5, errors: 1),
        UsageCounters(attempts: 1_000_000, successful: 999_999, errors: 12_345),
    ])
    func writtenByHandAsJSONWriterWritesIt(counters: UsageCounters) {
        let limits = RateLimits(counters: counters, maximum: 500, day: UTCDay(string: "2026-11-23")!)
        var out: [UInt8] = []
        limits.writeJSON(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(decoding: JSONWriter.bytes(limits.json), as: UTF8.self))
        #expect(String(decoding: out, as: UTF8.self).hasPrefix(#"{"attempts":\#(counters.attempts),"errors":"#))
    }
}
