import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@Suite struct AdminAPITests {
    static let yaml = "admin:\n  token: \"s3cret-admin-token-123\"\nquota:\n  daily_limit: 10\n"
    static let auth = [("Authorization", "Bearer s3cret-admin-token-123")]

    @Test func requiresTheBearerToken() async throws {
        try await TestServer.with(.router, yaml: Self.yaml) { (s: TestServer) async throws in
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas"), status: 401, errorType: "Unauthorized")
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas", headers: [("Authorization", "Bearer wrong")]), status: 401)
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas", headers: [("Authorization", "Basic abc")]), status: 401)
            #expect(try await s.request(.GET, "/admin/v1/quotas", headers: Self.auth).status == 200)
        }
    }

    @Test func listShowSetAndClear() async throws {
        try await TestServer.with(.router, yaml: Self.yaml) { (s: TestServer) async throws in
            for _ in 0..<3 { _ = try await s.android(TestServer.haBody(token: "busy:1")) }
            _ = try await s.android(TestServer.haBody(token: "quiet:1"))

            let list = try await s.request(.GET, "/admin/v1/quotas?top=1", headers: Self.auth)
            #expect(list.status == 200)
            #expect(list["day"] == "2026-11-21")
            #expect(list["quotas"]?.arrayValue?.count == 1)
            #expect(list["quotas"]?.arrayValue?.first?["target"] == "busy:1")
            #expect(list["quotas"]?.arrayValue?.first?["rateLimits"]?["successful"] == 3)

            let other = try await s.request(.GET, "/admin/v1/quotas?day=2026-11-20", headers: Self.auth)
            #expect(other["quotas"]?.arrayValue?.isEmpty == true)
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas?day=yesterday", headers: Self.auth), status: 400)
            expectJSONError(try await s.request(.GET, "/admin/v1/quotas?top=-1", headers: Self.auth), status: 400)

            let set = try await s.request(.PUT, "/admin/v1/limits/busy:1", body: #"{"limit": 3}"#, headers: Self.auth)
            #expect(set.status == 200, "\(set.rawBody)")
            #expect(set["limitOverride"] == 3)
            #expect(set["rateLimits"]?["remaining"] == 0)
            expectJSONError(try await s.android(TestServer.haBody(token: "busy:1")), status: 429)

            expectJSONError(try await s.request(.PUT, "/admin/v1/limits/busy:1", body: #"{"limit": -1}"#, headers: Self.auth), status: 400)
            expectJSONError(try await s.request(.PUT, "/admin/v1/limits/busy:1", body: "nope", headers: Self.auth), status: 400)

            let show = try await s.request(.GET, "/admin/v1/quotas/busy:1", headers: Self.auth)
            #expect(show["days"]?.arrayValue?.count == 1)
            #expect(show["rateLimits"]?["attempts"] == 4)

            let cleared = try await s.request(.DELETE, "/admin/v1/limits/busy:1", headers: Self.auth)
            #expect(cleared.status == 200)
            #expect(cleared["limitOverride"] == .null)
            expectJSONError(try await s.request(.DELETE, "/admin/v1/limits/busy:1", headers: Self.auth), status: 404)
            #expect(try await s.android(TestServer.haBody(token: "busy:1")).status == 201)
            expectJSONError(try await s.request(.POST, "/admin/v1/limits/busy:1", body: "{}", headers: Self.auth), status: 405)
        }
    }

    /// A whole number is accepted however JSON spells it; a fraction is not.
    @Test func aLimitMayBeSpelledAsAnIntegralFloat() async throws {
        try await TestServer.with(.router, yaml: Self.yaml) { (s: TestServer) async throws in
            let set = try await s.request(.PUT, "/admin/v1/limits/f:1", body: #"{"limit": 1015.0}"#, headers: Self.auth)
            #expect(set.status == 200, "\(set.rawBody)")
            #expect(set["limitOverride"] == 1015)
            expectJSONError(try await s.request(.PUT, "/admin/v1/limits/f:1", body: #"{"limit": 2.5}"#, headers: Self.auth), status: 400)
            expectJSONError(try await s.request(.PUT, "/admin/v1/limits/f:1", body: #"{"limit": 1e300}"#, headers: Self.auth), status: 400)
        }
    }

    /// The admin API reads the database directly: when it cannot, the answer is 503 `StorageUnavailable` with
    /// `Retry-After`, as on every other route, not a 500.
    @Test func aStorageFailureIs503() async throws {
        try await TestServer.with(.router, yaml: Self.yaml) { (s: TestServer) async throws in
            // The table the quota list reads is gone: every read of it fails in SQLite.
            try await SQLiteFile(path: s.dbPath).execute("ALTER TABLE daily_usage RENAME TO daily_usage_gone")
            let r = try await s.request(.GET, "/admin/v1/quotas", headers: Self.auth)
            expectJSONError(r, status: 503, errorType: "StorageUnavailable")
            #expect(r.headers["retry-after"] == "5")
        }
    }
}
