import Foundation
import PushRelayCore
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// The database's disk fills up under a running server: requests that need it get a fast 503 with a message and
/// `Retry-After`, `/health` and `/ready` report it, nothing already accepted is lost, and the server recovers by itself
/// when space is back, without a restart or a request to notice it.
///
/// Wall clock: a real file system fills up and empties under the server, and SQLite's busy waits run on real time.
@Suite(.serialized) struct StorageFaultTests {
    @Test(.enabled(if: TmpfsMount.available, "mounting a tmpfs needs root"))
    func aFullDiskIs503UntilSpaceIsBackAndNothingAcceptedIsLost() async throws {
        let disk = try TmpfsMount(sizeKiB: 4096)
        defer { disk.unmount() }
        try await TestServer.with(dbPath: disk.path + "/pushrelay.sqlite") { (s: TestServer) async throws in
            var accepted: [String] = []
            for i in 0..<20 {
                let token = "before:\(i)"
                let r = try await s.android(TestServer.haBody(token: token))
                #expect(r.status == 201)
                accepted.append(token)
            }
            #expect(try await s.request(.GET, "/ready").status == 200)

            disk.fill()
            var refused: HTTPReply?
            var i = 0
            while refused == nil, i < 2000 {
                let token = "during:\(i)"
                let r = try await s.android(TestServer.haBody(token: token, message: String(repeating: "x", count: 2000)))
                if r.status == 201 {
                    accepted.append(token)
                } else {
                    refused = r
                }
                i += 1
            }
            let r = try #require(refused, "the full disk never refused a write")
            expectJSONError(r, status: 503, errorType: "StorageUnavailable")
            #expect(r.headers["retry-after"] != nil)

            let health = try await s.request(.GET, "/health")
            #expect(health.status == 200)
            #expect(health.json["status"] == "degraded")
            #expect(health.json["storage"]?["state"] == "failing")
            #expect(health.json["storage"]?["message"]?.stringValue?.isEmpty == false)
            let ready = try await s.request(.GET, "/ready")
            expectJSONError(ready, status: 503, errorType: "NotReady")
            #expect(ready.headers["retry-after"] == "5")

            // Space comes back; no request is sent until the server says it is ready again (its monitor probes).
            disk.remove()
            try await eventually("ready again without a restart", seconds: 15) {
                try await s.request(.GET, "/ready").status == 200
            }
            #expect(try await s.request(.GET, "/health").json["status"] == "ok")
            let after = try await s.android(TestServer.haBody(token: "after:1"))
            #expect(after.status == 201)
            accepted.append("after:1")

            // Every notification answered 201 is counted once, before, during and after the fault.
            for token in accepted {
                let limits = try await s.post("/api/checkRateLimits", ["push_token": .string(token)])
                #expect(limits.int("rateLimits", "successful") == 1, "\(token) counted once")
            }
        }
    }
}
