import AsyncHTTPClient
import Foundation
import NIOCore
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

/// The in-flight bound on a live server: past it a notification waits for a place instead of being refused, only one
/// whose wait ends is refused, and clients take turns, so one client sending flat out cannot starve the others.
///
/// Alone: one client sending flat out past the in-flight bound while others take turns, timed at the gate.
@Suite(.timeLimit(.minutes(2))) struct ProviderGateTests {
    @Test func aNotificationPastTheBoundWaitsForAPlaceAndIsDelivered() async throws {
        let gate = ScriptedProvider.Gate()
        let slow = ScriptedProvider(name: "slow", [.hold(gate), .deliver])
        try await TestServer.with(
            providers: ["slow": slow],
            configure: { c in
                c.apps = [.init(match: "*", provider: "slow")]
                c.delivery.maxInFlight = 1
                c.delivery.maxWaitMs = 6000
            }
        ) { (s: TestServer) async throws in
            async let held = s.android(TestServer.haBody(token: "w:1"))
            try await eventually("the first call holds the only place") { slow.callCount == 1 }
            async let waiting = s.android(TestServer.haBody(token: "w:2"))
            try await consistently("the second waits: not sent, not refused", for: .milliseconds(300)) { slow.callCount == 1 }
            gate.open()
            #expect(try await held.status == 201)
            let second = try await waiting
            #expect(second.status == 201, "\(second.rawBody)")
            #expect(second.int("rateLimits", "successful") == 1)
            #expect(slow.callCount == 2)
        }
    }

    @Test func oneClientSendingFlatOutDoesNotStarveTheOthers() async throws {
        // One place, 50 ms a delivery: about 20 notifications a second. The greedy client keeps 150 waiting, so a
        // newcomer queued behind all of them would wait about 7.5 s, past the 4 s a notification may wait; taking
        // turns, it waits behind one of the greedy client's notifications at most (about 0.3 s with the five polite
        // clients, a margin of more than ten times for a machine busy with other work).
        let provider = ScriptedProvider(name: "steady", [.delay(milliseconds: 50, then: nil)])
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 250))
        )
        do {
            try await Self.flood(through: client, provider: provider)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private static func flood(through client: HTTPClient, provider: ScriptedProvider) async throws {
        try await TestServer.with(
            providers: ["steady": provider],
            configure: { c in
                c.apps = [.init(match: "*", provider: "steady")]
                c.delivery.maxInFlight = 1
                c.delivery.maxWaitMs = 4000
                c.quota.dailyLimit = 1_000_000
                c.http.maxConnectionsPerAddress = 0
                // The clients come through a proxy on loopback that names them in X-Forwarded-For.
                c.http.trustedProxies = TrustedProxies(networks: [OutboundAddressPolicy.Network(cidr: "127.0.0.1")!])
            }
        ) { (s: TestServer) async throws in
            @Sendable func post(_ token: String, from address: String) async throws -> Int {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(s.port)/api/sendPush/android/v1")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "X-Forwarded-For", value: address)
                request.body = .bytes(ByteBuffer(string: TestServer.haBody(token: token).jsonString()))
                let response = try await client.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 16)
                return Int(response.status.code)
            }
            let politeDone = Locked(false)
            let greedy = Locked<[Int: Int]>([:])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for loop in 0..<150 {
                    group.addTask {
                        var n = 0
                        while !politeDone.withLock({ $0 }) {
                            n += 1
                            let status = try await post("greedy:\(loop):\(n)", from: "203.0.113.66")
                            greedy.withLock { $0[status, default: 0] += 1 }
                        }
                    }
                }
                try await eventually("the greedy client is refused: the server is past its capacity") { greedy.withLock { $0[503, default: 0] } > 0 }
                // Five polite clients, five notifications each, one after another.
                let polite = try await withThrowingTaskGroup(of: [Int].self) { politeGroup in
                    for address in 1...5 {
                        politeGroup.addTask {
                            var statuses: [Int] = []
                            for n in 1...5 { statuses.append(try await post("polite:\(address):\(n)", from: "198.51.100.\(address)")) }
                            return statuses
                        }
                    }
                    return try await politeGroup.reduce(into: []) { $0 += $1 }
                }
                politeDone.withLock { $0 = true }
                try await group.waitForAll()
                #expect(polite == Array(repeating: 201, count: 25), "every polite notification was delivered")
            }
            let statuses = greedy.withLock { $0 }
            #expect(Set(statuses.keys).isSubset(of: [201, 503]), "\(statuses)")
            #expect(statuses[201, default: 0] > 0)
        }
    }
}
