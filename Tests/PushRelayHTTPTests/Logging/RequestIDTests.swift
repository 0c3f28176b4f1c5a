import Foundation
import PushRelayCore
import PushRelayHTTP
import PushRelayServerTestRig
import Testing

@testable import PushRelayServer

@Suite struct RequestIDTests {
    @Test func aPlainClientIDIsKept() {
        for id in ["abc", "7f3c9a2e-1b4d-4e5f-8a6b-0c1d2e3f4a5b", "trace:span/1.2_x", String(repeating: "a", count: 128)] {
            #expect(RequestID.accept(id) == id)
        }
    }

    @Test func anIDThatCouldForgeALogLineIsReplaced() {
        for id in ["", "a b", "line\nforged=1", "quote\"", "tab\t", String(repeating: "a", count: 129), "é", "a;b", "{}"] {
            let accepted = RequestID.accept(id)
            #expect(accepted != id)
            #expect(accepted.wholeMatch(of: /[0-9a-f]{16}/) != nil, "\(accepted)")
        }
    }

    @Test func freshIDsDiffer() {
        let ids = Set((0..<1000).map { _ in RequestID.make() })
        #expect(ids.count == 1000)
        #expect(ids.allSatisfy { $0.utf8.count == 16 })
    }

    /// Both HTTP paths (the router and the Home Assistant fast path) echo the id and put it on the lines they log.
    @Test func everyAnswerEchoesItsIDAndTheRequestsLinesCarryIt() async throws {
        try await TestServer.with(configure: { $0.quota.dailyLimit = 1 }) { (s: TestServer) async throws in
            // Router: a JSON 404 and the health check.
            var r = try await s.request(.GET, "/nowhere", headers: [("X-Request-Id", "router-1")])
            #expect(r.status == 404)
            #expect(r.headers["x-request-id"] == "router-1")
            r = try await s.request(.GET, "/health")
            let fresh = try #require(r.headers["x-request-id"])
            #expect(fresh.wholeMatch(of: /[0-9a-f]{16}/) != nil)
            r = try await s.request(.GET, "/health", headers: [("X-Request-Id", "forged=1 level=error \"x\"")])
            #expect(r.headers["x-request-id"]?.wholeMatch(of: /[0-9a-f]{16}/) != nil)

            // Fast path: the first notification is accepted, the second is over the quota and logged ("rate limited").
            r = try await s.request(.POST, "/api/sendPush/android/v1", body: TestServer.haBody().jsonString(), headers: [("X-Request-Id", "ha-1")])
            #expect(r.status == 201)
            #expect(r.headers["x-request-id"] == "ha-1")
            r = try await s.request(.POST, "/api/sendPush/android/v1", body: TestServer.haBody().jsonString(), headers: [("X-Request-Id", "ha-2")])
            #expect(r.status == 429)
            #expect(r.headers["x-request-id"] == "ha-2")
            let limited = s.logs.lines.filter { $0.text.hasPrefix("rate limited") }
            #expect(limited.count == 1)
            #expect(limited.first?.requestID == "ha-2", "\(limited)")

            // Router: an admin request with a wrong token is logged with its id.
            let before = s.logs.lines.count
            r = try await s.request(.POST, "/api/checkRateLimits", body: "{", headers: [("X-Request-Id", "router-2")])
            #expect(r.status == 400)
            #expect(r.headers["x-request-id"] == "router-2")
            #expect(s.logs.lines.dropFirst(before).allSatisfy { $0.requestID == nil || $0.requestID == "router-2" })
        }
    }
}
