import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestSupport
import Testing

/// Home Assistant POST → PushRelay → fake FCM / fake APNs over real sockets (TLS, HTTP/2 for APNs).
@Suite struct EndToEndProviderTests {
    static let hexToken = String(repeating: "0a1b", count: 16)

    /// Runs a PushRelay configured with `fcm` and `apns` providers against freshly started fakes.
    func withFakes(
        apps: [AppProviders.Entry] = [.init(match: "io.robbie.HomeAssistant*", provider: "apns"), .init(match: "*", provider: "fcm")],
        configure: @escaping (inout PushRelayConfig) -> Void = { _ in },
        _ body: @Sendable (TestServer, FakeProviderEnvironment) async throws -> Void
    ) async throws {
        try await withProviderFakes(apps: apps, configure: configure, body)
    }

    @Test func androidGoesToFCMExactlyAsTranslated() async throws {
        try await withFakes { s, env in
            let r = try await s.android(TestServer.haBody(token: "fcm:tok-1", title: "Door", data: ["ttl": 0, "priority": "high", "tag": "door"]))
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r["messageId"]?.stringValue?.hasPrefix("projects/pushrelay-test/messages/") == true)
            let records = env.fcm.records
            #expect(records.count == 1)
            let rec = try #require(records.first)
            #expect(rec.path == "/v1/projects/pushrelay-test/messages:send")
            #expect(rec.accessToken != nil)
            #expect(
                rec.body == [
                    "message": [
                        "token": "fcm:tok-1",
                        "android": ["ttl": "0s", "priority": "high"],
                        "data": ["message": "Hello", "title": "Door", "tag": "door", "webhook_id": "hook-1"],
                        "fcm_options": ["analytics_label": "androidV1Notification"],
                    ]
                ]
            )
            // What PushRelay answers as sentPayload is what FCM received.
            #expect(r["sentPayload"] == rec.body?["message"])
        }
    }

    @Test func iosDirectToAPNsOverHTTP2() async throws {
        try await withFakes { s, env in
            let r = try await s.ios(
                TestServer.haBody(
                    token: Self.hexToken,
                    title: "T",
                    appID: "io.robbie.HomeAssistant",
                    data: ["subtitle": "sub", "tag": "t-1", "group": "g", "push": ["badge": 3]]
                )
            )
            #expect(r.status == 201, "\(r.rawBody)")
            let rec = try #require(env.apns.records.first)
            #expect(rec.status == 200)
            #expect(rec.path == "/3/device/\(Self.hexToken)")
            #expect(rec.headers["apns-topic"] == "io.robbie.HomeAssistant")
            #expect(rec.headers["apns-push-type"] == "alert")
            #expect(rec.headers["apns-priority"] == "10")
            #expect(rec.headers["apns-collapse-id"] == "t-1")
            #expect(
                rec.payload?["aps"] == [
                    "alert": ["title": "T", "body": "Hello", "subtitle": "sub"], "sound": "default", "badge": 3,
                    "thread-id": "g", "mutable-content": 1,
                ]
            )
            #expect(rec.payload?["webhook_id"] == "hook-1")
            #expect(r["messageId"]?.stringValue == rec.headers["apns-id"])
        }
    }

    @Test func iosViaFCMCarriesTheAPNsBlock() async throws {
        try await withFakes(apps: [.init(match: "*", provider: "fcm")]) { s, env in
            let r = try await s.ios(TestServer.haBody(token: "ios-fcm:tok", appID: "io.robbie.HomeAssistant", data: ["url": "/lovelace/0"]))
            #expect(r.status == 201, "\(r.rawBody)")
            let message = try #require(env.fcm.records.first?.body?["message"])
            #expect(message["apns"]?["payload"]?["url"] == "/lovelace/0")
            #expect(message["apns"]?["payload"]?["aps"]?["mutable-content"] == 1)
            #expect(message["notification"]?["body"] == "Hello")
            #expect(env.apns.records.isEmpty)
        }
    }

    @Test func unregisteredTokensAre410AndRemembered() async throws {
        try await withFakes { s, env in
            env.fcm.script("dead:fcm", [.unregistered])
            env.apns.script(Self.hexToken, [.unregistered(since: Date(timeIntervalSince1970: 1_700_000_000))])
            let a = try await s.android(TestServer.haBody(token: "dead:fcm"))
            expectJSONError(a, status: 410, errorType: "InvalidToken")
            #expect(a["errorCode"] == "UNREGISTERED")
            let i = try await s.ios(TestServer.haBody(token: Self.hexToken, appID: "io.robbie.HomeAssistant"))
            expectJSONError(i, status: 410, errorType: "InvalidToken")
            #expect(i["errorCode"] == "Unregistered")
            // Remembered: neither provider is asked again.
            expectJSONError(try await s.android(TestServer.haBody(token: "dead:fcm")), status: 410)
            expectJSONError(try await s.ios(TestServer.haBody(token: Self.hexToken, appID: "io.robbie.HomeAssistant")), status: 410)
            #expect(env.fcm.records.count == 1)
            #expect(env.apns.records.count == 1)
        }
    }

    @Test func aRetryAfter503Succeeds() async throws {
        try await withFakes { s, env in
            env.fcm.script("flaky:tok", [.unavailable(retryAfter: nil), .success])
            let r = try await s.android(TestServer.haBody(token: "flaky:tok"))
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(env.fcm.records.map(\.status) == [503, 200])
            #expect(r.int("rateLimits", "errors") == 0)
        }
    }

    @Test func persistentUnavailabilityIs503WithRetryAfterPastTheDeadline() async throws {
        // Retry-After (60 s) is past the deadline (20 s), so nothing is retried and the answer comes at once. The
        // deadline is long only so that a loaded machine has time for the quota reservation (half of it; past that the
        // answer is StorageBusy) and for the first connection and OAuth exchange, whose own timeout would answer
        // without a Retry-After.
        try await withFakes(configure: { $0.delivery.deadlineMs = 20_000 }) { s, env in
            env.fcm.script("down:tok", [.unavailable(retryAfter: 60)])
            env.apns.script(Self.hexToken, [.reject(status: 429, reason: "TooManyRequests", retryAfter: 60)])
            let a = try await s.android(TestServer.haBody(token: "down:tok"))
            expectJSONError(a, status: 503, errorType: "ProviderUnavailable")
            #expect(a.headers["retry-after"] == "60")
            #expect(a["message"]?.stringValue?.contains("fcm") == true)
            #expect(a.int("rateLimits", "errors") == 1)
            let i = try await s.ios(TestServer.haBody(token: Self.hexToken, appID: "io.robbie.HomeAssistant"))
            expectJSONError(i, status: 503, errorType: "ProviderUnavailable")
            #expect(i["message"]?.stringValue?.contains("apns") == true)
        }
    }

    @Test func oversizedAPNsPayloadIs413AndNothingIsSent() async throws {
        try await withFakes { s, env in
            let r = try await s.ios(
                TestServer.haBody(token: Self.hexToken, message: String(repeating: "x", count: 5000), appID: "io.robbie.HomeAssistant")
            )
            expectJSONError(r, status: 413, errorType: "PayloadTooLarge")
            #expect(r.int("rateLimits", "errors") == 1)
            #expect(env.apns.records.isEmpty)
        }
    }

    @Test func senderIDMismatchIsAConfigurationError() async throws {
        try await withFakes { s, env in
            env.fcm.script("other:project", [.senderIDMismatch])
            let r = try await s.android(TestServer.haBody(token: "other:project"))
            expectJSONError(r, status: 500, errorType: "ConfigurationError")
        }
    }

    @Test func invalidProviderConfigNamesTheKey() throws {
        let problem: ConfigError? = {
            do {
                _ = try PushRelayConfig(tree: ["providers": ["f": ["type": "fcm", "service_account_file": "/nonexistent/sa.json"]]])
                return nil
            } catch let e as ConfigError { return e } catch { return nil }
        }()
        #expect(problem?.key == "providers.f.service_account_file", "\(String(describing: problem))")
        let apns: ConfigError? = {
            do {
                _ = try PushRelayConfig(tree: ["providers": ["a": ["type": "apns", "topic": "x"]]])
                return nil
            } catch let e as ConfigError { return e } catch { return nil }
        }()
        #expect(apns?.key.hasPrefix("providers.a") == true, "\(String(describing: apns))")
    }
}
