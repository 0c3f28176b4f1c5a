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

    @Test func routesPreferExactIDs() {
        let r = AppRoutes([.init(match: "io.*", provider: "glob"), .init(match: "io.exact", provider: "exact"), .init(match: "*", provider: "all")])
        #expect(r.provider(for: "io.exact") == "exact")
        #expect(r.provider(for: "io.other") == "glob")
        #expect(r.provider(for: "com.x") == "all")
        #expect(r.provider(for: nil) == "all")
        #expect(AppRoutes([.init(match: "io.x", provider: "p")]).provider(for: "io.y") == nil)
    }

    @Test func tokensAreShortenedForLogs() {
        let t = "fcm-token:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
        #expect(TokenDisplay.short(t) == "fcm-to…-1RYqx")
        #expect(!TokenDisplay.short(t).contains("APA91bHun4MxP5"))
        #expect(TokenDisplay.short("abc") == "abc…")
    }
}

@Suite struct HARequestParsingTests {
    @Test func readsAllFieldsAndToleratesExtraKeys() throws {
        let n = try HANotification(body: [
            "message": "hi", "title": "t", "push_token": "a:b", "hass_confirm_id": "c1", "live_activity_token": "la",
            "registration_info": ["app_id": "io.x", "app_version": "1", "os_version": "17", "webhook_id": "w"],
            "data": ["k": [1, 2]], "unknown": true,
        ])
        #expect(n.message == "hi" && n.title == "t" && n.pushToken == "a:b" && n.hassConfirmID == "c1" && n.liveActivityToken == "la")
        #expect(n.registrationInfo == HARegistrationInfo(appID: "io.x", appVersion: "1", osVersion: "17", webhookID: "w"))
        #expect(n.data == ["k": [1, 2]])
    }

    @Test func messageMayBeMissing() throws {
        let n = try HANotification(body: ["push_token": "a:b", "trigger": ["id": "x"]])
        #expect(n.message == nil && n.data.isEmpty)
    }

    @Test func reportsWhatIsWrong() {
        func error(_ body: JSONValue) -> HARequestError? {
            do {
                _ = try HANotification(body: body)
                return nil
            } catch { return error }
        }
        #expect(error([1]) == .malformedBody("The request body must be a JSON object."))
        #expect(error(["message": "x"]) == .missingPushToken)
        #expect(error(["push_token": ""]) == .missingPushToken)
        #expect(error(["push_token": 5]) == .wrongType(field: "push_token", expected: "a string"))
        #expect(error(["push_token": "a", "data": "x"]) == .wrongType(field: "data", expected: "an object"))
        #expect(error(["push_token": "a", "message": ["x"]]) == .wrongType(field: "message", expected: "a string"))
        #expect(
            error(["push_token": "a", "registration_info": ["app_id": 3]]) == .wrongType(field: "registration_info.app_id", expected: "a string")
        )
        for e in [HARequestError.missingPushToken, .malformedBody("x"), .wrongType(field: "f", expected: "y")] {
            #expect(!e.description.isEmpty)
        }
    }
}
