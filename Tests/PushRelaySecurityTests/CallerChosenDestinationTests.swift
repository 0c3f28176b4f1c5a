import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// What a caller chooses for a delivery (a header value, a WebPush push service) is the caller's: a value a strict
/// HTTP/2 server would reset the stream for is refused before any provider sees it, and a push service that cannot be
/// reached fails that delivery only, never the provider's circuit breaker for every device.
///
/// Load: deliveries to push services that cannot be reached, each answer held to a 10 s client limit.
@Suite struct CallerChosenDestinationTests {
    static let companion = "io.robbie.HomeAssistant"

    /// A distinct well-formed APNs token per `i`.
    static func token(_ i: Int) -> String { String(repeating: "0", count: 56) + String(format: "%08x", i) }

    @Test func anIOSNotificationWithAMalformedCollapseIDIsAnswered400AndReachesNoProvider() async throws {
        try await withProviderFakes(configure: { $0.delivery.breakerMinRequests = 5 }) { s, env in
            let bad = ["", " door", "door ", "door\u{85}", "\u{2028}door", "\u{FEFF}door", String(repeating: "c", count: 65)]
            for (i, value) in bad.enumerated() {
                for data: [String: JSONValue] in [["apns_headers": ["apns-collapse-id": .string(value)]], ["tag": .string(value)]] {
                    let token = Self.token(i)
                    let r = try await s.ios(TestServer.haBody(token: token, title: "T", appID: Self.companion, data: data))
                    if value.isEmpty, data["tag"] != nil {
                        // An empty tag is no collapse id at all.
                        #expect(r.status == 201, "\(r.rawBody)")
                        continue
                    }
                    expectJSONError(r, status: 400, errorType: "InvalidPayload")
                    #expect(r["errorCode"] == "BadHeader", "\(String(reflecting: value)): \(r.rawBody)")
                    #expect(r["message"]?.stringValue?.contains("apns-collapse-id") == true, "\(r.rawBody)")
                    #expect(r.rateLimits == nil, "refused before the quota is read")
                }
            }
            #expect(env.apns.records.count == 1, "only the notification with an empty tag reached APNs")
            #expect(env.apns.records.first?.headers["apns-collapse-id"] == nil)
            // A valid collapse id with an inner space goes through as sent.
            let ok = try await s.ios(
                TestServer.haBody(
                    token: Self.token(99),
                    title: "T",
                    appID: Self.companion,
                    data: ["apns_headers": ["apns-collapse-id": "front door"]]
                )
            )
            #expect(ok.status == 201, "\(ok.rawBody)")
            #expect(env.apns.records.last?.headers["apns-collapse-id"] == "front door")
        }
    }

    @Test func webPushEndpointsThatDoNotResolveDoNotOpenTheBreakerForAGoodOne() async throws {
        try await withMatrix(configure: { c in
            c.delivery.breakerMinRequests = 5
            c.metricsEnabled = true
            c.providers["web"]?.options["allowed_endpoints"] = ["127.0.0.1:*", "*.push.invalid"]
        }) { s, f in
            let sub = f.web.subscribe()
            for i in 0..<12 {
                let endpoint = "https://dead-\(i).push.invalid/wpush/v2/\(i)"
                let r = try await s.notify(message, devices: [webDevice(sub, data: ["endpoint": .string(endpoint)])])
                // Dropped without rejecting the pushkey: the push service may resolve again later.
                #expect(r.status == 200, "\(r.rawBody)")
                #expect(r.json == ["rejected": []], "\(r.rawBody)")
            }
            try await s.storage.deliveries.flush()
            let log = try await s.storage.deliveries.recentDeliveries(pushToken: nil, limit: 20)
            #expect(log.count == 12)
            #expect(log.allSatisfy { $0.outcome == .invalidTarget }, "\(log.map(\.outcome))")
            #expect(log.allSatisfy { $0.errorMessage?.contains(".push.invalid' does not resolve") == true }, "\(log.map(\.errorMessage))")
            #expect(f.web.records.isEmpty)

            let good = try await s.notify(message, devices: [webDevice(sub)])
            #expect(good.json == ["rejected": []], "\(good.rawBody)")
            try await eventually("the good subscription's push arrives") { f.web.records.count == 1 }
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_circuit_open{provider="web"} 0"#), "\(metrics)")
        }
    }
}
