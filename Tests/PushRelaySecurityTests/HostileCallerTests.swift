import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestSupport
import Testing

/// A stranger on the unauthenticated routes, who knows one identifier (a push token, a pushkey) and controls every
/// field of the request: one test per row of the threat model in `docs/security.md`, against real servers on loopback
/// and the provider fakes over TLS and HTTP/2. The push-channel rows are in `PushChannelBindingTests`.
@Suite struct HostileCallerTests {
    static let companion = "io.robbie.HomeAssistant"
    static let victim = String(repeating: "ab12", count: 16)
    static let other = String(repeating: "cd34", count: 16)

    /// A distinct well-formed APNs token per `i`.
    static func token(_ i: Int) -> String { String(repeating: "0", count: 56) + String(format: "%08x", i) }

    static func ios(_ token: String, appID: String = HostileCallerTests.companion, data: [String: JSONValue]? = nil) -> JSONValue {
        TestServer.haBody(token: token, title: "T", appID: appID, data: data)
    }

    // MARK: Headers

    @Test func aCallersHeadersNeverReachAPNsNorOpenTheBreaker() async throws {
        try await withProviderFakes(configure: { $0.delivery.breakerMinRequests = 5 }) { s, env in
            let hostile: [(headers: JSONValue, named: String)] = [
                (["te": "gzip"], "'te'"), (["connection": "close"], "'connection'"), (["content-length": "1"], "'content-length'"),
                (["x-custom": "1"], "'x-custom'"), (["apns-collapse-id": "a\r\nx-injected: 1"], "apns-collapse-id"),
                (["apns-priority": "7"], "apns-priority"), (["apns-expiration": "soon"], "apns-expiration"),
                // An `apns-` name Apple does not document: refused by name like any other.
                (["apns-unknown": "1"], "'apns-unknown'"),
            ]
            for round in 0..<3 {
                for (i, h) in hostile.enumerated() {
                    let r = try await s.ios(Self.ios(Self.token(round * 100 + i), data: ["apns_headers": h.headers]))
                    expectJSONError(r, status: 400, errorType: "InvalidPayload")
                    #expect(r["errorCode"] == "BadHeader")
                    #expect(r["message"]?.stringValue?.contains(h.named) == true, "\(r.rawBody)")
                }
            }
            #expect(env.apns.records.isEmpty, "nothing a caller's header spoiled reached APNs")
            // Documented headers with valid values still pass, and another device is served.
            let ok = try await s.ios(Self.ios(Self.other, data: ["apns_headers": ["apns-expiration": "0", "APNS-Priority": "5"]]))
            #expect(ok.status == 201, "\(ok.rawBody)")
            #expect(env.apns.records.last?.headers["apns-priority"] == "5")
            #expect(env.apns.records.last?.headers["apns-expiration"] == "0")
        }
    }

    // MARK: The breaker

    @Test func oneThrottledAPNsDeviceDoesNotOpenTheBreakerForOthers() async throws {
        try await withProviderFakes(configure: { $0.delivery.breakerMinRequests = 5 }) { s, env in
            env.apns.script(Self.victim, Array(repeating: .reject(status: 429, reason: "TooManyRequests"), count: 40))
            for _ in 0..<12 {
                let r = try await s.ios(Self.ios(Self.victim, data: ["push": ["badge": 1]]))
                expectJSONError(r, status: 503)
                #expect(r["errorCode"] == "TooManyRequests")
            }
            #expect(env.apns.records.count == 12, "a throttled device is not retried within the request")
            let r = try await s.ios(Self.ios(Self.other))
            #expect(r.status == 201, "\(r.rawBody)")
        }
    }

    @Test func oneThrottledFCMDeviceDoesNotOpenTheBreakerButAProjectQuotaDoes() async throws {
        try await withProviderFakes(configure: {
            $0.delivery.breakerMinRequests = 5
            $0.delivery.maxAttempts = 1
        }) { s, env in
            env.fcm.script("fcm:victim", Array(repeating: .deviceRateExceeded(retryAfter: nil), count: 12))
            for _ in 0..<12 {
                expectJSONError(try await s.android(TestServer.haBody(token: "fcm:victim")), status: 503)
            }
            #expect(try await s.android(TestServer.haBody(token: "fcm:other")).status == 201)
            // The project's own quota is the provider failing as a whole: that opens the breaker.
            env.fcm.script("fcm:project", Array(repeating: .quotaExceeded(retryAfter: nil), count: 20))
            for _ in 0..<20 { _ = try await s.android(TestServer.haBody(token: "fcm:project")) }
            let refused = try await s.android(TestServer.haBody(token: "fcm:third"))
            expectJSONError(refused, status: 503)
            #expect(refused["errorCode"] == "ProviderCircuitOpen", "\(refused.rawBody)")
        }
    }

    @Test func aTokenPostedByTheWrongRouteIsNotRememberedDead() async throws {
        try await withProviderFakes { s, env in
            // A stranger sends the victim's token with an app id that routes it to a topic it does not belong to.
            env.apns.script(Self.victim, [.reject(status: 400, reason: "DeviceTokenNotForTopic")])
            let wrong = try await s.ios(Self.ios(Self.victim))
            expectJSONError(wrong, status: 410, errorType: "InvalidToken")
            // The device's own route still delivers: the mismatch was the route's, not the device's.
            let r = try await s.ios(Self.ios(Self.victim))
            #expect(r.status == 201, "\(r.rawBody)")
        }
    }

    // MARK: One device, one identity

    @Test func caseVariantsOfOneAPNsTokenShareOneQuota() async throws {
        try await withProviderFakes(configure: { $0.quota.dailyLimit = 3 }) { s, env in
            for _ in 0..<3 { #expect(try await s.ios(Self.ios(Self.victim)).status == 201) }
            for variant in [Self.victim.uppercased(), "AB12" + Self.victim.dropFirst(4), "aB12" + Self.victim.dropFirst(4)] {
                let r = try await s.ios(Self.ios(variant))
                #expect(r.status == 429, "\(r.rawBody)")
            }
            let pushes = env.apns.records.filter { $0.path == "/3/device/\(Self.victim)" && $0.payload?["aps"]?["alert"]?["title"] == "T" }
            #expect(pushes.count == 3, "three notifications reached the device, whatever the spelling")
            let check = try await s.post("/api/checkRateLimits", ["push_token": .string(Self.victim.uppercased())])
            #expect(check.int("rateLimits", "successful") == 3)
        }
    }

    @Test func relaySpellingsShareOneQuotaAndNeverSpendHomeAssistants() async throws {
        try await withRelayFakes(configure: { $0.relay.dailyLimitPerToken = 2 }) { s, env in
            let body: [UInt8] = Array(repeating: 7, count: 64)
            let headers = [("content-encoding", "aes128gcm")]
            #expect(try await s.rawPost("/relay-to/production/\(Self.victim)", body: body, headers: headers).status == 201)
            #expect(try await s.rawPost("/relay-to/production/\(Self.victim.uppercased())", body: body, headers: headers).status == 201)
            let third = try await s.rawPost("/relay-to/production/AB12\(Self.victim.dropFirst(4))", body: body, headers: headers)
            #expect(third.status == 429, "\(third.rawBody)")
            #expect(env.apns.records.count == 2)
            // The relay sender spent the relay's allowance for the token, not the device's Home Assistant quota.
            let ha = try await s.ios(Self.ios(Self.victim))
            #expect(ha.status == 201, "\(ha.rawBody)")
            #expect(ha.int("rateLimits", "successful") == 1)
        }
    }

    @Test func aLiveActivityIsCountedOnTheTokenAPNsReceives() async throws {
        try await withProviderFakes(apps: [.init(match: "*", provider: "fcm")], configure: { $0.quota.dailyLimit = 2 }) { s, _ in
            let activity = String(repeating: "5e", count: 32)
            var statuses: [Int] = []
            for i in 0..<4 {
                var body = Self.ios("fcm:fresh-\(i)", data: ["tag": "washer", "live_update": true, "event": "update"]).objectValue!
                body["live_activity_token"] = .string(i % 2 == 0 ? activity : activity.uppercased())
                statuses.append(try await s.ios(.object(body)).status)
            }
            #expect(statuses == [201, 201, 429, 429], "a new push_token each time does not buy another activity update")
        }
    }

    @Test func matrixPushkeySpellingsAreOneDevice() async throws {
        try await withMatrix(configure: { c in
            c.matrix.apps[MatrixFakes.apnsApp] = .init(provider: "apns", format: .apns(.init()), dailyLimit: 2)
        }) { s, fakes in
            let standard = MatrixFakes.apnsPushkey
            let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            // Listed twice, in two spellings and once more verbatim: pushed once.
            let first = try await s.notify(
                ["event_id": "$e0", "room_id": "!r", "type": "m.room.message", "counts": ["unread": 1]],
                devices: [device(MatrixFakes.apnsApp, standard), device(MatrixFakes.apnsApp, urlSafe), device(MatrixFakes.apnsApp, standard)]
            )
            #expect(first.status == 200, "\(first.rawBody)")
            #expect(fakes.env.apns.records.count == 1)
            // Each spelling is the same device for the daily limit of 2.
            let unpadded = standard.replacingOccurrences(of: "=", with: "")
            for (i, pushkey) in [urlSafe, unpadded, standard].enumerated() {
                let r = try await s.notify(
                    ["event_id": .string("$e\(i + 1)"), "room_id": "!r", "type": "m.room.message", "counts": ["unread": 1]],
                    devices: [device(MatrixFakes.apnsApp, pushkey)]
                )
                #expect(r.status == 200, "\(r.rawBody)")
            }
            #expect(fakes.env.apns.records.count == 2, "two pushes at a limit of 2, whatever the spelling")
        }
    }

    @Test func aDeadDeviceIsRejectedInEverySpellingTheHomeserverSent() async throws {
        try await withMatrix { s, fakes in
            fakes.env.apns.script(MatrixFakes.apnsHex, [.unregistered(since: Date(timeIntervalSince1970: 1_700_000_000))])
            let standard = MatrixFakes.apnsPushkey
            let unpadded = standard.replacingOccurrences(of: "=", with: "")
            let r = try await s.notify(
                ["event_id": "$dead", "room_id": "!r", "counts": ["unread": 1]],
                devices: [device(MatrixFakes.apnsApp, standard), device(MatrixFakes.apnsApp, unpadded)]
            )
            #expect(r.status == 200, "\(r.rawBody)")
            #expect(fakes.env.apns.records.count == 1)
            #expect(Set(r["rejected"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [standard, unpadded])
        }
    }

    // MARK: Bounds

    @Test func oneNotifyCannotFanOutPastMaxDevices() async throws {
        try await withMatrix(configure: { $0.matrix.maxDevices = 3 }) { s, fakes in
            let devices = (0..<4).map { device(MatrixFakes.fcmApp, "fcm-token-\($0)") }
            let r = try await s.notify(["event_id": "$many", "room_id": "!r"], devices: devices)
            expectMatrixError(r, status: 400, errcode: "M_BAD_JSON")
            #expect(r["error"]?.stringValue?.contains("matrix.max_devices") == true)
            #expect(fakes.env.fcm.records.isEmpty, "nothing was pushed")
        }
    }

    @Test func theMatrixRetryQueueIsBounded() async throws {
        try await withMatrix(configure: { $0.matrix.retry.maxQueued = 1 }) { s, fakes in
            fakes.env.fcm.script("fcm-token-a", [.unavailable(retryAfter: nil)])
            fakes.env.fcm.script("fcm-token-b", [.unavailable(retryAfter: nil)])
            let devices = [
                device(MatrixFakes.fcmApp, "fcm-token-a"), device(MatrixFakes.fcmApp, "fcm-token-b"), device(MatrixFakes.fcmApp, "fcm-ok"),
            ]
            let r = try await s.notify(["event_id": "$q", "room_id": "!r"], devices: devices)
            expectMatrixError(r, status: 502, errcode: "M_UNKNOWN")
            #expect(r["error"]?.stringValue?.contains("retry queue is full") == true, "\(r.rawBody)")
        }
    }
}
