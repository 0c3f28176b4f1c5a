import PushRelayCore
import Testing

@Suite struct APNsHeadersTests {
    @Test func documentedHeadersWithValidValuesPass() {
        #expect(APNsHeaders.problem(["apns-priority": "5", "APNS-Expiration": "0", "apns-collapse-id": "door", "apns-push-type": "alert"]) == nil)
        #expect(APNsHeaders.problem(["apns-topic": "x", "apns-id": "y", "authorization": "z"]) == nil, "PushRelay's own: ignored")
        #expect(APNsHeaders.passed(["apns-topic": "x", "APNS-Priority": "10"]) == ["apns-priority": "10"])
        #expect(APNsHeaders.passed(["apns-unknown": "1", "apns-priority": "5"]) == ["apns-priority": "5"], "only documented names pass")
    }

    @Test func anythingElseIsNamed() {
        for (headers, named) in [
            (["te": "gzip"], "'te'"), (["connection": "close"], "'connection'"), (["content-length": "1"], "'content-length'"),
            (["x-custom": "1"], "'x-custom'"), (["apns-priority": "7"], "apns-priority"), (["apns-expiration": "-1"], "apns-expiration"),
            (["apns-push-type": "bogus"], "apns-push-type"), (["apns-collapse-id": "a\r\nb"], "apns-collapse-id"),
            (["bad\nname": "1"], "'bad?name'"),
            // Names that look like Apple's but are not documented: the allow-list is by name, not by prefix.
            (["apns-unknown": "1"], "'apns-unknown'"), (["apns-": "1"], "'apns-'"), (["APNS-Request-ID": "x"], "'APNS-Request-ID'"),
        ] as [([String: String], String)] {
            let problem = APNsHeaders.problem(headers)
            #expect(problem?.contains(named) == true, "\(headers): \(problem ?? "nil")")
            #expect(problem?.hasPrefix("data.apns_headers") == true)
        }
    }

    @Test(arguments: ["", " x", "x ", "\tx", "x\u{85}", "\u{2028}x", "\u{FEFF}x", "x\r\ny", String(repeating: "c", count: 65)])
    func aCollapseIDThatAStrictServerWouldResetIsRefusedNamingTheHeader(value: String) {
        let problem = APNsHeaders.problem(["apns-collapse-id": value])
        #expect(problem?.hasPrefix("data.apns_headers: apns-collapse-id ") == true, "\(String(reflecting: value)): \(problem ?? "nil")")
        #expect(problem?.contains("APNs") == false, "the caller's value is blamed, not the provider")
    }

    @Test func everyCallerChosenValueIsChecked() {
        #expect(APNsHeaders.problem(["apns-priority": " 10"])?.contains("apns-priority") == true)
        #expect(APNsHeaders.problem(["apns-expiration": ""])?.contains("apns-expiration") == true)
        #expect(APNsHeaders.problem(["APNS-Push-Type": "alert "])?.contains("apns-push-type") == true)
        #expect(APNsHeaders.problem(["apns-push-type": "sound"])?.contains("must be one of") == true)
    }

    @Test func goodValuesPassAndPushRelaysOwnAreIgnored() {
        let headers = [
            "apns-collapse-id": "kitchen door", "apns-priority": "5", "apns-expiration": "0", "apns-push-type": "alert",
            "apns-topic": " ignored ",
        ]
        #expect(APNsHeaders.problem(headers) == nil)
        #expect(APNsHeaders.problem(["apns-collapse-id": String(repeating: "c", count: APNsHeaders.collapseIDLimit)]) == nil)
        #expect(APNsHeaders.passed(headers)["apns-topic"] == nil)
    }
}
