import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestSupport
import Testing

/// WebPush POST → /relay-to/… → fake APNs / fake FCM over real sockets.
@Suite struct WebPushRelayEndToEndTests {
    static let token = String(repeating: "c0ffee00", count: 8)
    static let body: [UInt8] = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }

    @Test func aesgcmToAPNsWithEveryHeaderMapping() async throws {
        try await withRelayFakes { s, env in
            let r = try await s.rawPost(
                "/relay-to/production/\(Self.token)/account/42",
                body: Self.body,
                headers: [
                    ("Content-Encoding", "aesgcm"), ("Encryption", "salt=AQIDBAUGBwgJCgsMDQ4PEA"), ("crypto-key", "dh=BAUG;p256ecdsa=AAAA"),
                    ("TTL", "60"), ("Urgency", "low"), ("Topic", "thread-7"),
                ]
            )
            #expect(r.status == 201, "\(r.rawBody)")
            let rec = try #require(env.apns.records.first)
            #expect(rec.status == 200)
            #expect(rec.path == "/3/device/\(Self.token)")
            #expect(rec.headers["apns-topic"] == env.bundleID)
            #expect(rec.headers["apns-push-type"] == "alert")
            #expect(rec.headers["apns-priority"] == "5")
            #expect(rec.headers["apns-collapse-id"] == "thread-7")
            #expect(rec.headers["apns-expiration"] == String(Int64(s.clock.now().timeIntervalSince1970) + 60))
            #expect(r.headers["location"] == "/relay-to/messages/\(rec.headers["apns-id"] ?? "?")")
            #expect(r.headers["ttl"] == "60")
            let p = try #require(rec.payload)
            #expect(p["aps"] == ["alert": "New notification", "mutable-content": 1, "content-available": 1])
            #expect(ExtendedZ85.decode(p["p"]?.stringValue ?? "") == Self.body)
            #expect(ExtendedZ85.decode(p["s"]?.stringValue ?? "") == Array(1...16))
            #expect(ExtendedZ85.decode(p["k"]?.stringValue ?? "") == [4, 5, 6])
            #expect(p["x"] == "account/42")
        }
    }

    @Test func aes128gcmToAPNsDevelopmentWithDefaults() async throws {
        try await withRelayFakes(configure: { $0.relay.alertText = "🎺" }) { s, env in
            let r = try await s.rawPost("/relay-to/development/\(Self.token)", body: Self.body, headers: [("content-encoding", "aes128gcm")])
            #expect(r.status == 201, "\(r.rawBody)")
            #expect(r.headers["ttl"] == String(WebPushHeaders.maxTTLSeconds))
            let rec = try #require(env.apns.records.first)
            #expect(rec.headers["apns-priority"] == "10")
            #expect(rec.headers["apns-expiration"] == nil)
            #expect(rec.headers["apns-collapse-id"] == nil)
            #expect(rec.payload?["aps"]?["alert"] == "🎺")
            #expect(rec.payload?["k"] == nil)
            #expect(rec.payload?["s"] == nil)
            #expect(rec.payload?["x"] == nil)
            #expect(ExtendedZ85.decode(rec.payload?["p"]?.stringValue ?? "") == Self.body)
        }
    }

    @Test func toFCMInBothEncodings() async throws {
        try await withRelayFakes { s, env in
            let a = try await s.rawPost(
                "/relay-to/fcm/fcm:token-1/extra",
                body: Self.body,
                headers: [
                    ("Content-Encoding", "aes128gcm"), ("TTL", "0"), ("Urgency", "very-low"), ("Topic", "c1"),
                ]
            )
            #expect(a.status == 201, "\(a.rawBody)")
            #expect(a.headers["location"]?.hasPrefix("/relay-to/messages/") == true)
            #expect(a.headers["ttl"] == "0")
            let m = try #require(env.fcm.records.first?.body?["message"])
            #expect(m["token"] == "fcm:token-1")
            #expect(m["data"] == ["p": .string(ExtendedZ85.encode(Self.body)), "rfc": "1", "x": "extra"])
            #expect(m["android"] == ["priority": "normal", "ttl": "0s", "collapse_key": "c1"])
            #expect(m["notification"] == ["title": "New notification"])

            let b = try await s.rawPost(
                "/relay-to/fcm/fcm:token-2",
                body: Self.body,
                headers: [
                    ("Content-Encoding", "aesgcm"), ("Encryption", "salt=AQI"), ("Crypto-Key", "dh=BAU="), ("Urgency", "high"),
                ]
            )
            #expect(b.status == 201, "\(b.rawBody)")
            let n = try #require(env.fcm.records.last?.body?["message"])
            #expect(
                n["data"] == [
                    "p": .string(ExtendedZ85.encode(Self.body)), "k": .string(ExtendedZ85.encode([4, 5])), "s": .string(ExtendedZ85.encode([1, 2])),
                ]
            )
            #expect(n["android"] == ["priority": "high"])
        }
    }

    @Test func badRequestsAreJSONErrorsAndNothingIsSent() async throws {
        try await withRelayFakes { s, env in
            let path = "/relay-to/production/\(Self.token)"
            expectJSONError(try await s.rawPost(path, body: Self.body, headers: []), status: 415, errorType: "UnsupportedContentEncoding")
            expectJSONError(try await s.rawPost(path, body: Self.body, headers: [("Content-Encoding", "gzip")]), status: 415)
            expectJSONError(
                try await s.rawPost(path, body: Self.body, headers: [("Content-Encoding", "aesgcm"), ("Encryption", "salt=AQI")]),
                status: 400
            )
            expectJSONError(
                try await s.rawPost(path, body: Self.body, headers: [("Content-Encoding", "aesgcm"), ("Crypto-Key", "dh=AQI")]),
                status: 400
            )
            expectJSONError(try await s.rawPost(path, body: [], headers: [("Content-Encoding", "aes128gcm")]), status: 400)
            expectJSONError(
                try await s.rawPost("/relay-to/staging/\(Self.token)", body: Self.body, headers: [("Content-Encoding", "aes128gcm")]),
                status: 400
            )
            expectJSONError(
                try await s.rawPost("/relay-to/production/xyz", body: Self.body, headers: [("Content-Encoding", "aes128gcm")]),
                status: 400
            )
            // Too large once z85-encoded: refused before sending.
            let big = [UInt8](repeating: 1, count: 3500)
            expectJSONError(
                try await s.rawPost(path, body: big, headers: [("Content-Encoding", "aes128gcm")]),
                status: 413,
                errorType: "PayloadTooLarge"
            )
            expectJSONError(try await s.rawPost("/relay-to/fcm/t", body: big, headers: [("Content-Encoding", "aes128gcm")]), status: 413)
            // Past relay.max_body_bytes: the message names that setting.
            let past = try await s.rawPost(path, body: [UInt8](repeating: 1, count: 9000), headers: [("Content-Encoding", "aes128gcm")])
            expectJSONError(past, status: 413, errorType: "PayloadTooLarge")
            #expect(past["message"]?.stringValue?.contains("relay.max_body_bytes") == true, "\(past.rawBody)")
            let get = try await s.request(.GET, path)
            expectJSONError(get, status: 405)
            #expect(get.headers["allow"] == "POST")
            let put = try await s.request(.PUT, path, body: "{}")
            expectJSONError(put, status: 405)
            #expect(put.headers["allow"] == "POST")
            #expect(try await s.request(.GET, "/relay-to/_health").status == 200)
            #expect(try await s.request(.DELETE, "/relay-to/_health").headers["allow"] == "GET, HEAD")
            #expect(env.apns.records.isEmpty)
            #expect(env.fcm.records.isEmpty)
            #expect(try await s.request(.GET, "/relay-to/_health").status == 200)
        }
    }

    @Test func deadTokensAre410() async throws {
        try await withRelayFakes { s, env in
            env.apns.script(Self.token, [.unregistered(since: Date(timeIntervalSince1970: 1_700_000_000))])
            env.fcm.script("dead:fcm", [.unregistered])
            let unsubscribe = ("Unsubscribe-URL", "https://mastodon.example/api/web_push/unsubscribe/1")
            let a = try await s.rawPost(
                "/relay-to/production/\(Self.token)",
                body: Self.body,
                headers: [("Content-Encoding", "aes128gcm"), unsubscribe]
            )
            expectJSONError(a, status: 410, errorType: "InvalidToken")
            #expect(a["errorCode"] == "Unregistered")
            let b = try await s.rawPost("/relay-to/fcm/dead:fcm", body: Self.body, headers: [("Content-Encoding", "aes128gcm")])
            expectJSONError(b, status: 410, errorType: "InvalidToken")
        }
    }

    @Test func perTokenDailyQuotaAndPerAddressLimit() async throws {
        try await withRelayFakes(configure: { $0.relay.dailyLimitPerToken = 2 }) { s, env in
            let path = "/relay-to/fcm/quota:tok"
            for _ in 0..<2 { #expect(try await s.rawPost(path, body: Self.body, headers: [("Content-Encoding", "aes128gcm")]).status == 201) }
            expectJSONError(
                try await s.rawPost(path, body: Self.body, headers: [("Content-Encoding", "aes128gcm")]),
                status: 429,
                errorType: "RateLimited"
            )
            #expect(env.fcm.records.count == 2)
            // A dead token is remembered while the quota ledger is on: the provider is not asked again.
            env.fcm.script("dead:tok", [.unregistered])
            #expect(try await s.rawPost("/relay-to/fcm/dead:tok", body: Self.body, headers: [("Content-Encoding", "aes128gcm")]).status == 410)
            expectJSONError(try await s.rawPost("/relay-to/fcm/dead:tok", body: Self.body, headers: [("Content-Encoding", "aes128gcm")]), status: 410)
            #expect(env.fcm.records.count == 3)
        }
        try await withRelayFakes(configure: { $0.relay.maxRequestsPerMinutePerAddress = 2 }) { s, _ in
            for _ in 0..<2 {
                #expect(try await s.rawPost("/relay-to/fcm/a", body: Self.body, headers: [("Content-Encoding", "aes128gcm")]).status == 201)
            }
            let r = try await s.rawPost("/relay-to/fcm/b", body: Self.body, headers: [("Content-Encoding", "aes128gcm")])
            expectJSONError(r, status: 429, errorType: "RateLimited")
            #expect(r.headers["retry-after"] == "60")
        }
    }

    @Test func notConfiguredIs404() async throws {
        try await withRelayFakes(configure: { $0.relay.fcmProvider = nil }) { s, _ in
            expectJSONError(try await s.rawPost("/relay-to/fcm/x", body: Self.body, headers: [("Content-Encoding", "aes128gcm")]), status: 404)
        }
    }

    @Test func configNamesTheRelayKeys() throws {
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["relay": ["apns_provider": "nope"]]) }
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["relay": ["bogus": 1]]) }
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["relay": ["unsubscribe_allowed_hosts": ["https://x/"]]]) }
        #expect(throws: ConfigError.self) { try PushRelayConfig(tree: ["voip": ["fcm_provider": "sandbox"]]) }
        let c = try PushRelayConfig(tree: ["relay": ["alert_text": "Hi", "unsubscribe_allowed_hosts": ["Mastodon.Example"]]])
        #expect(c.relay.alertText == "Hi")
        #expect(c.relay.unsubscribeAllowedHosts == ["mastodon.example"])
        #expect(PushRelayConfig().relay.unsubscribeAllowedHosts.isEmpty)
    }
}
