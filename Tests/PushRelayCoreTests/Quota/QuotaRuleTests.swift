import Foundation
import Testing

@testable import PushRelayCore

@Suite struct QuotaRuleTests {
    @Test func onlySuccessfulDeliveriesGate() {
        var c = UsageCounters()
        for _ in 0..<3 {
            let d = QuotaDecision.decide(current: c, maximum: 3, noticeSent: false)
            #expect(d.allowed)
            c = d.counters
        }
        #expect(c == UsageCounters(attempts: 3, successful: 3, errors: 0))
        let refused = QuotaDecision.decide(current: c, maximum: 3, noticeSent: false)
        #expect(!refused.allowed && refused.sendNotice && refused.noticeSent)
        #expect(refused.counters == UsageCounters(attempts: 4, successful: 3, errors: 0))
        let again = QuotaDecision.decide(current: refused.counters, maximum: 3, noticeSent: true)
        #expect(!again.allowed && !again.sendNotice)
    }

    @Test func errorsDoNotUseQuota() {
        let c = UsageCounters(attempts: 10, successful: 2, errors: 8)
        #expect(QuotaDecision.decide(current: c, maximum: 3, noticeSent: false).allowed)
        #expect(RateLimits(counters: c, maximum: 3, day: UTCDay(dayNumber: 0)).total == 10)
    }

    @Test func zeroLimitRefusesEverything() {
        #expect(!QuotaDecision.decide(current: UsageCounters(), maximum: 0, noticeSent: false).allowed)
    }

    @Test func rateLimitsFields() {
        let rl = RateLimits(counters: UsageCounters(attempts: 7, successful: 5, errors: 1), maximum: 5, day: UTCDay(string: "2026-11-21")!)
        #expect(rl.remaining == 0 && rl.total == 6 && rl.resetsAt == "2026-11-22T00:00:00.000Z")
        #expect(RateLimits(counters: UsageCounters(successful: 9), maximum: 5, day: UTCDay(dayNumber: 0)).remaining == 0)
    }

    @Test func limitPrecedenceOverrideThenExactAppThenGlobThenDefault() {
        let p = QuotaPolicy(dailyLimit: 500, appLimits: [("io.example.*", 100), ("io.example.special", 7), ("*", 300)])
        #expect(p.maximum(appID: "io.example.special", override: nil) == 7)
        #expect(p.maximum(appID: "io.example.other", override: nil) == 100)
        #expect(p.maximum(appID: "org.other", override: nil) == 300)
        #expect(p.maximum(appID: "io.example.special", override: 2) == 2)
        #expect(QuotaPolicy().maximum(appID: nil, override: nil) == 500)
    }

    @Test func exemptionSwitches() {
        let command = TranslatedNotification(fcmMessage: [:], command: "request_location_update")
        let critical = TranslatedNotification(fcmMessage: [:], isCritical: true)
        let plain = TranslatedNotification(fcmMessage: [:])
        #expect(QuotaPolicy().isExempt(command) && QuotaPolicy().isExempt(critical) && !QuotaPolicy().isExempt(plain))
        let strict = QuotaPolicy(exemptCommands: false, exemptCritical: false)
        #expect(!strict.isExempt(command) && !strict.isExempt(critical))
    }

    @Test func tokensAreShortenedForLogs() {
        let t = "fcm-token:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
        #expect(TokenDisplay.short(t) == "fcm-to…-1RYqx")
        #expect(!TokenDisplay.short(t).contains("APA91bHun4MxP5"))
        #expect(TokenDisplay.short("abc") == "abc…")
    }
}
