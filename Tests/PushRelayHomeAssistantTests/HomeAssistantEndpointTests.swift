import AsyncHTTPClient
import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestSupport
import Testing

@Suite struct HomeAssistantEndpointTests {
    @Test func androidSuccessHasTheRelayBodyShape() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let r = try await s.android(TestServer.haBody(title: "Door", data: ["ttl": 0, "priority": "high"]))
            #expect(r.status == 201)
            #expect(r.headers["content-type"] == "application/json")
            #expect(r["messageId"]?.stringValue?.hasPrefix("sandbox:") == true)
            #expect(r["target"] == "tok:en-1")
            #expect(r["sentPayload"]?["token"] == "tok:en-1")
            #expect(r["sentPayload"]?["data"]?["message"] == "Hello")
            #expect(r["sentPayload"]?["android"]?["ttl"] == "0s")
            #expect(
                r.rateLimits == [
                    "attempts": 1, "successful": 1, "errors": 0, "total": 1, "maximum": 500, "remaining": 499,
                    "resetsAt": "2026-11-22T00:00:00.000Z",
                ]
            )
        }
    }

    @Test(arguments: ["/api/sendPushNotification", "/api/sendPush/iOS/v1"])
    func iosEndpointsTranslateWithAPNsBlock(path: String) async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let r = try await s.post(path, TestServer.haBody(title: "T", appID: "io.robbie.HomeAssistant", data: ["subtitle": "sub"]))
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r["sentPayload"]?["apns"]?["payload"]?["aps"]?["alert"]?["subtitle"] == "sub")
            #expect(r.int("rateLimits", "successful") == 1)
        }
    }

    @Test func toleratesExtraKeysAndMissingMessage() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            var body = TestServer.haBody(message: nil)
            body["hass_confirm_id"] = "abc"
            body["live_activity_token"] = "la-token"
            body["push_subscription"] = ["trigger": ["id": "t"]]
            let r = try await s.android(body)
            #expect(r.status == 201, "\(r.rawBody)")
        }
    }

    @Test func refusesWith429AfterTheLimitAndSendsTheNoticeOnce() async throws {
        try await TestServer.with(yaml: "quota:\n  daily_limit: 3\n") { (s: TestServer) async throws in
            for i in 1...3 {
                let r = try await s.android(TestServer.haBody())
                #expect(r.status == 201)
                #expect(r.int("rateLimits", "remaining") == Int64(3 - i))
            }
            for attempt in 4...6 {
                let r = try await s.android(TestServer.haBody())
                expectJSONError(r, status: 429, errorType: "RateLimited")
                #expect(r["target"] == "tok:en-1")
                #expect(r.int("rateLimits", "attempts") == Int64(attempt))
                #expect(r.int("rateLimits", "successful") == 3)
                #expect(r.int("rateLimits", "remaining") == 0)
            }
            let log = try await s.storage.deliveries.recentDeliveries(pushToken: "tok:en-1")
            #expect(log.filter { $0.kind == .notification }.count == 3)
            let notices = log.filter { $0.kind == .rateLimitNotice }
            #expect(notices.count == 1)
            #expect(notices.first?.counted == false)
            let payload = try JSONParser.parse(Array((notices.first?.payload ?? "").utf8))
            let text = payload["data"]?.objectValue?.values.compactMap(\.stringValue).joined(separator: " ") ?? ""
            #expect(text.contains("reached"), "\(payload)")
            #expect(text.contains("midnight UTC"), "\(payload)")
        }
    }

    @Test func exemptCommandsAndCriticalAlertsBypassTheLimitAndTouchNoCounter() async throws {
        // The official relay's exemptions, no wider: its Android command list, the companion app's iOS commands, and
        // the companion app's critical sound.
        try await TestServer.with(yaml: "quota:\n  daily_limit: 1\n") { (s: TestServer) async throws in
            #expect(try await s.android(TestServer.haBody()).status == 201)
            #expect(try await s.android(TestServer.haBody()).status == 429)
            let exempt: [(String, JSONValue)] = [
                ("/api/sendPush/android/v1", TestServer.haBody(message: "request_location_update")),
                ("/api/sendPush/android/v1", TestServer.haBody(message: "command_dnd", data: ["command": "off"])),
                ("/api/sendPush/android/v1", TestServer.haBody(message: "clear_notification", data: ["tag": "t"])),
                ("/api/sendPushNotification", TestServer.haBody(message: "request_location_update", appID: "io.robbie.HomeAssistant")),
                ("/api/sendPushNotification", TestServer.haBody(message: "clear_badge", appID: "io.robbie.HomeAssistant")),
                (
                    "/api/sendPushNotification",
                    TestServer.haBody(
                        message: "Leak",
                        appID: "io.robbie.HomeAssistant",
                        data: ["push": ["sound": ["name": "default", "critical": 1, "volume": 1.0]]]
                    )
                ),
            ]
            for (path, body) in exempt {
                let r = try await s.post(path, body)
                #expect(r.status == 201, "\(path) \(body): \(r.rawBody)")
                #expect(r.int("rateLimits", "attempts") == 2, "\(body)")
                #expect(r.int("rateLimits", "successful") == 1)
            }
            let ordinary = try await s.ios(TestServer.haBody(message: "kiosk_mode", appID: "io.robbie.HomeAssistant"))
            #expect(ordinary.status == 429)
        }
    }

    @Test func visibleNotificationsAreCountedHoweverTheyAreDressed() async throws {
        try await TestServer.with(yaml: "quota:\n  daily_limit: 1\n") { (s: TestServer) async throws in
            #expect(try await s.android(TestServer.haBody()).status == 201)
            let counted: [(String, JSONValue)] = [
                ("/api/sendPush/android/v1", TestServer.haBody(message: "command_launch_app", data: ["package_name": "x"])),
                ("/api/sendPush/android/v1", TestServer.haBody(message: "command_beacon_monitor")),
                ("/api/sendPush/android/v1", TestServer.haBody(message: "command_made_up", title: "Visible title")),
                ("/api/sendPush/android/v1", TestServer.haBody(message: "Fire!", data: ["channel": "alarm_stream", "priority": "high"])),
                (
                    "/api/sendPushNotification",
                    TestServer.haBody(message: "Leak", appID: "io.robbie.HomeAssistant", data: ["push": ["interruption-level": "critical"]])
                ),
                // A critical sound for an app that is not the companion app, directly or through the `apns` pass-through.
                (
                    "/api/sendPushNotification",
                    TestServer.haBody(
                        message: "Leak",
                        appID: "com.example.own",
                        data: ["push": ["sound": ["name": "a", "critical": 1, "volume": 1.0]]]
                    )
                ),
                (
                    "/api/sendPushNotification",
                    TestServer.haBody(
                        message: "Leak",
                        appID: "com.example.own",
                        data: ["apns": ["payload": ["aps": ["alert": "x", "sound": ["name": "a", "critical": 1, "volume": 1]]]]]
                    )
                ),
            ]
            for (path, body) in counted {
                let r = try await s.post(path, body)
                #expect(r.status == 429, "\(path) \(body): \(r.rawBody)")
            }
        }
    }

    @Test func exemptionsCanBeSwitchedOff() async throws {
        try await TestServer.with(yaml: "quota:\n  daily_limit: 1\n  exempt_commands: false\n  exempt_critical: false\n") {
            (s: TestServer) async throws in
            #expect(try await s.android(TestServer.haBody(message: "request_location_update")).status == 201)
            #expect(try await s.android(TestServer.haBody(message: "request_location_update")).status == 429)
            #expect(try await s.android(TestServer.haBody(data: ["channel": "alarm_stream"])).status == 429)
        }
    }

    @Test func theDayRollsOverAtMidnightUTC() async throws {
        let clock = ManualClock("2026-11-21T23:59:58Z", timers: .real)
        try await TestServer.with(yaml: "quota:\n  daily_limit: 1\n", clock: clock) { (s: TestServer) async throws in
            #expect(try await s.android(TestServer.haBody()).status == 201)
            let refused = try await s.android(TestServer.haBody())
            #expect(refused.status == 429)
            #expect(refused.rateLimits?["resetsAt"] == "2026-11-22T00:00:00.000Z")
            clock.set("2026-11-22T00:00:00Z")
            let next = try await s.android(TestServer.haBody())
            #expect(next.status == 201)
            #expect(next.rateLimits?["resetsAt"] == "2026-11-23T00:00:00.000Z")
            #expect(next.int("rateLimits", "attempts") == 1)
            // A new day: the notice may go out once more.
            #expect(try await s.android(TestServer.haBody()).status == 429)
            let notices = try await s.storage.deliveries.recentDeliveries().filter { $0.kind == .rateLimitNotice }
            #expect(notices.map(\.day.description).sorted() == ["2026-11-21", "2026-11-22"])
        }
    }

    @Test func perTokenOverridesAndPerAppLimits() async throws {
        let yaml = """
            quota:
              daily_limit: 5
              app_limits:
                "io.example.*": 2
                io.example.vip: 3
            """
        try await TestServer.with(yaml: yaml) { (s: TestServer) async throws in
            let glob = try await s.android(TestServer.haBody(token: "a:1", appID: "io.example.app"))
            #expect(glob.int("rateLimits", "maximum") == 2)
            let exact = try await s.android(TestServer.haBody(token: "a:2", appID: "io.example.vip"))
            #expect(exact.int("rateLimits", "maximum") == 3)
            let other = try await s.android(TestServer.haBody(token: "a:3", appID: "org.other"))
            #expect(other.int("rateLimits", "maximum") == 5)
            try await s.storage.admin.setLimit(pushToken: "a:3", limit: 1)
            let capped = try await s.android(TestServer.haBody(token: "a:3", appID: "org.other"))
            expectJSONError(capped, status: 429)
            #expect(capped.int("rateLimits", "maximum") == 1)
            try await s.storage.admin.clearLimit(pushToken: "a:3")
            #expect(try await s.android(TestServer.haBody(token: "a:3", appID: "org.other")).status == 201)
        }
    }

    @Test func checkRateLimitsIsReadOnly() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            _ = try await s.android(TestServer.haBody())
            for _ in 0..<3 {
                let r = try await s.post("/api/checkRateLimits", ["push_token": "tok:en-1"])
                #expect(r.status == 200)
                #expect(r["target"] == "tok:en-1")
                #expect(r.int("rateLimits", "attempts") == 1)
                #expect(r.int("rateLimits", "successful") == 1)
            }
            let fresh = try await s.post("/api/checkRateLimits", ["push_token": "never:seen"])
            #expect(fresh.int("rateLimits", "remaining") == 500)
            expectJSONError(try await s.post("/api/checkRateLimits", ["nothing": 1]), status: 403)
        }
    }

    @Test func healthAnswersOK() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let r = try await s.request(.GET, "/health")
            #expect(r.status == 200 && r["status"] == "ok")
            #expect(r["version"]?.stringValue == PushRelayVersion.string)
            // The commit the binary was built from (this checkout's, with -dirty while it has changes).
            let commit = try #require(r["commit"]?.stringValue)
            #expect(commit == "unknown" || commit.range(of: "^[0-9a-f]{12}(-dirty)?$", options: .regularExpression) != nil, "\(commit)")
            #expect(r.headers["content-type"] == "application/json")
        }
    }
}
