import AsyncHTTPClient
import Foundation
import PushRelayCore
import PushRelayServerTestRig
import Testing

/// Bad requests get a JSON error with the right status and a `message`, and hostile input never crashes the server.
///
/// AddressSanitizer: malformed and hostile bodies, read by the notify paths' decoders.
@Suite struct ErrorResponseTests {
    @Test func missingOrEmptyPushTokenIs403() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            for body: JSONValue in [["message": "x"], ["message": "x", "push_token": ""], ["push_token": .null]] {
                let r = try await s.android(body)
                expectJSONError(r, status: 403)
                #expect(r["errorMessage"]?.stringValue?.isEmpty == false)
            }
        }
    }

    @Test func malformedBodiesAre400() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let bodies = [
                "not json", "{\"push_token\": ", "[1,2]", "\"str\"", "42", "", "{\"push_token\": 7}",
                "{\"push_token\":\"a:b\",\"data\":[1]}", "{\"push_token\":\"a:b\",\"message\":{\"a\":1}}",
                "{\"push_token\":\"a:b\",\"registration_info\":\"x\"}", "{\"push_token\":\"a:b\",\"title\":false}",
            ]
            for path in ["/api/sendPush/android/v1", "/api/sendPushNotification", "/api/checkRateLimits"] {
                for b in bodies
                where !(path == "/api/checkRateLimits" && b.contains("data")) && !(path == "/api/checkRateLimits" && b.contains("a:b")) {
                    let r = try await s.request(.POST, path, body: b)
                    expectJSONError(r, status: 400)
                }
            }
            // Nothing was counted.
            #expect(try await s.storage.admin.list(day: UTCDay(s.clock.now()), top: nil).isEmpty)
        }
    }

    @Test func oversizedBodiesAre413() async throws {
        try await TestServer.with(yaml: "http:\n  max_body_bytes: 2048\n") { (s: TestServer) async throws in
            let big = TestServer.haBody(message: String(repeating: "x", count: 4096))
            expectJSONError(try await s.android(big), status: 413, errorType: "PayloadTooLarge")
            #expect(try await s.android(TestServer.haBody()).status == 201)
        }
    }

    @Test func unknownPathsAre404AndWrongMethods405() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            expectJSONError(try await s.request(.GET, "/nope"), status: 404, errorType: "NotFound")
            expectJSONError(try await s.request(.POST, "/api/sendPush/android/v2", body: "{}"), status: 404)
            let wrong = try await s.request(.GET, "/api/sendPush/android/v1")
            expectJSONError(wrong, status: 405, errorType: "MethodNotAllowed")
            #expect(wrong.headers["allow"] == "POST")
            expectJSONError(try await s.request(.POST, "/health", body: "{}"), status: 405)
            expectJSONError(try await s.request(.PUT, "/api/checkRateLimits", body: "{}"), status: 405)
            // TRACE too: a JSON 405 naming the route's methods, not a 404.
            let trace = try await s.request(.TRACE, "/health")
            expectJSONError(trace, status: 405, errorType: "MethodNotAllowed")
            #expect(trace.headers["allow"] == "GET, HEAD")
            // HEAD answers as GET does, without the body.
            let get = try await s.request(.GET, "/health")
            let head = try await s.request(.HEAD, "/health")
            #expect(head.status == 200 && head.rawBody.isEmpty, "HEAD /health: \(head.status) \(head.rawBody)")
            #expect(head.headers["content-length"] == get.headers["content-length"])
            // An error answer to HEAD has no body either, so the connection's next answer is read whole.
            let refused = try await s.request(.HEAD, "/api/sendPush/android/v1")
            #expect(refused.status == 405 && refused.rawBody.isEmpty && refused.headers["allow"] == "POST")
            #expect(try await s.request(.HEAD, "/nope").status == 404)
            #expect(try await s.request(.GET, "/health").status == 200)
            // The admin API is not there without an admin token.
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas"), status: 404)
        }
    }

    @Test func hostileInputNeverCrashesTheServer() async throws {
        try await TestServer.with { (s: TestServer) async throws in
            let deep = String(repeating: "[", count: 100_000)
            expectJSONError(try await s.request(.POST, "/api/sendPush/android/v1", body: deep), status: 400)
            let weird: [JSONValue] = [
                TestServer.haBody(data: ["actions": "not-an-array"]),
                TestServer.haBody(data: ["actions": [1, .null, ["action": ["nested": true]]]]),
                TestServer.haBody(data: ["ttl": "abc", "priority": 5, "push": "x", "apns": 1, "android": [1]]),
                TestServer.haBody(
                    appID: "io.robbie.HomeAssistant",
                    data: ["push": ["sound": ["critical": "x", "volume": "loud"]], "apns": ["payload": 1]]
                ),
                TestServer.haBody(
                    appID: "io.robbie.HomeAssistant",
                    data: ["apns": ["headers": 5], "apns_headers": "x", "attachment": 3, "actions": ["a"]]
                ),
            ]
            for body in weird {
                for path in ["/api/sendPush/android/v1", "/api/sendPushNotification"] {
                    let r = try await s.post(path, body)
                    #expect([201, 400].contains(r.status), "\(path) \(body): \(r.rawBody)")
                    #expect(r.headers["content-type"] == "application/json")
                }
            }
            #expect(try await s.request(.GET, "/health").status == 200)
        }
    }
}
