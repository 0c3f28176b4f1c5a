import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

/// The fake FCM misbehaving in each way a real one can: every Home Assistant POST is still answered (a late answer
/// past the deadline does not make it a success), retries stop at the attempt cap and at a `Retry-After` past the
/// deadline, and a message FCM accepted is not sent again. (That a `Retry-After` is waited before the next attempt is
/// stepped on the server's clock in `DeliveryOutcomeTests`.)
///
/// Wall clock: the fake FCM answers late on a real TLS connection, and the deadline is held against that real delay.
///
/// ThreadSanitizer, with cores to spare: its 3 s deadlines, held against the fake's real delays, are missed under
/// ThreadSanitizer's 5-15x slowdown on two shared cores without any race, so CI leaves it out.
@Suite struct ProviderChaosTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let script: [FakeFCMOutcome]
        /// The status Home Assistant gets.
        let status: Int
        /// How many sends FCM sees.
        let sends: ClosedRange<Int>
        var testDescription: String { name }
    }

    static let deadline = 3000
    static let attempts = 3

    static let cases: [Case] = [
        Case(name: "30 s of latency", script: [.delayed(milliseconds: 30_000, .success)], status: 503, sends: 1...1),
        Case(name: "connection reset without an answer", script: Array(repeating: .dropConnection, count: 5), status: 503, sends: 1...attempts),
        Case(
            name: "503 without Retry-After",
            script: Array(repeating: .unavailable(retryAfter: nil), count: 5),
            status: 503,
            sends: attempts...attempts
        ),
        Case(
            name: "503 with Retry-After: 1",
            script: Array(repeating: .unavailable(retryAfter: 1), count: 5),
            status: 503,
            sends: 2...3
        ),
        Case(name: "503 with Retry-After past the deadline", script: [.unavailable(retryAfter: 30)], status: 503, sends: 1...1),
        Case(
            name: "429 quota exceeded",
            script: Array(repeating: .quotaExceeded(retryAfter: nil), count: 5),
            status: 503,
            sends: attempts...attempts
        ),
        Case(name: "500 internal error", script: Array(repeating: .internalError, count: 5), status: 503, sends: attempts...attempts),
        Case(
            name: "500 with a body that is not JSON",
            script: Array(repeating: .malformedBody(status: 500), count: 5),
            status: 503,
            sends: attempts...attempts
        ),
        Case(name: "200 with a body that is not JSON", script: [.malformedBody(status: 200)], status: 201, sends: 1...1),
        Case(name: "one 503, then accepted", script: [.unavailable(retryAfter: nil), .success], status: 201, sends: 2...2),
    ]

    /// One fake FCM and one server for every case (in turn, each with a token of its own), warmed up first so that
    /// the OAuth token fetch is not part of any case's deadline on a loaded machine.
    @Test func everyPostIsAnsweredAndNoAcceptedMessageIsSentAgain() async throws {
        try await withProviderFakes(
            apps: [.init(match: "*", provider: "fcm")],
            configure: { config in
                config.delivery.deadlineMs = Self.deadline
                config.delivery.maxAttempts = Self.attempts
                config.delivery.retryBaseMs = 20
                config.delivery.breakerCoolDownMs = 0  // every case must reach the fake
            }
        ) { s, env in
            // The warm-up is no case: on a loaded machine the first connection and token fetch may take longer than a
            // case's deadline, so it is tried until it gets through.
            try await eventually("the warm-up notification is delivered") {
                try await s.android(TestServer.haBody(token: "chaos:warm-up")).status == 201
            }
            for c in Self.cases {
                let token = "chaos:" + c.name.replacingOccurrences(of: " ", with: "-")
                env.fcm.script(token, c.script)
                let r = try await s.android(TestServer.haBody(token: token))
                #expect(r.status == c.status, "\(c.name): \(r.rawBody)")
                if c.status != 201 {
                    expectJSONError(r, status: c.status, errorType: "ProviderUnavailable")
                    #expect(r.headers["retry-after"] != nil, "\(c.name)")
                }
                let sends = env.fcm.records.filter { $0.token == token }.count
                #expect(c.sends.contains(sends), "\(c.name): \(sends) sends")
                // What FCM accepted is counted once; what it did not is counted as an error.
                let limits = try await s.post("/api/checkRateLimits", ["push_token": .string(token)])
                #expect(limits.int("rateLimits", "successful") == (c.status == 201 ? 1 : 0), "\(c.name)")
            }
        }
    }
}
