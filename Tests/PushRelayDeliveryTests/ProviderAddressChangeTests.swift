import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestSupport
import Testing

/// Google and Apple move their front ends: the provider's host resolves to a new address, the old front end rotates
/// its connection with a GOAWAY and then takes no connection again. Against the fakes over TLS and HTTP/2, with the
/// endpoint's host a name (`localhost`, which the fakes' certificate covers) that a `FakeDNS` answers with 127.0.0.1
/// first and 127.0.0.2 later, each address a TCP proxy on the same port in front of the one fake: every notification
/// is delivered once, the later ones through the new address, one connection opened to each address (counts, not
/// timings).
///
/// Wall clock: the old front end closes 300 ms of real time after its GOAWAY, through TCP proxies on real sockets.
@Suite struct ProviderAddressChangeTests {
    /// One provider type under test: how PushRelay builds it against the fakes, how a notification is sent to it, and
    /// what the fake delivered.
    struct Provider: Sendable {
        var name: String
        var app: AppProviders.Entry
        /// The fake's own port, behind the proxies.
        var fakePort: @Sendable (FakeProviderEnvironment) -> Int
        var frontEnd: @Sendable (FakeProviderEnvironment) -> FakeFrontEnd
        /// The provider instance, sending to `endpoint` and resolving its host with `resolver`.
        var make: @Sendable (FakeProviderEnvironment, _ endpoint: String, ProviderResolver, ManualClock) throws -> any PushProvider
        /// Posts notification `i` as Home Assistant does; returns the status.
        var send: @Sendable (TestServer, Int) async throws -> Int
        /// The notification numbers the fake accepted (200), each with the fake's connection that carried it.
        var delivered: @Sendable (FakeProviderEnvironment) -> [(number: Int, connectionID: Int)]
    }

    static let fcm = Provider(
        name: "fcm",
        app: .init(match: "*", provider: "fcm"),
        fakePort: { $0.fcm.port },
        frontEnd: { $0.fcm.frontEnd },
        make: { env, endpoint, resolver, clock in
            var options = env.fcmOptions
            options["endpoint"] = .string(endpoint)
            var configuration = try FCMProvider.Configuration(options: options, baseDirectory: nil)
            configuration.resolver = resolver
            return FCMProvider(name: "fcm", configuration: configuration, clock: clock)
        },
        send: { s, i in try await s.android(TestServer.haBody(token: "moved-\(i)")).status },
        delivered: { env in
            env.fcm.records.filter { $0.status == 200 && $0.path.hasSuffix("messages:send") }.compactMap { record in
                record.token.flatMap { Int($0.dropFirst("moved-".count)) }.map { ($0, record.request.connectionID) }
            }
        }
    )

    static let apns = Provider(
        name: "apns",
        app: .init(match: "io.robbie.HomeAssistant*", provider: "apns"),
        fakePort: { $0.apns.port },
        frontEnd: { $0.apns.frontEnd },
        make: { env, endpoint, resolver, clock in
            var options = env.apnsOptions
            options["endpoint"] = .string(endpoint)
            var configuration = try APNsProvider.Configuration(options: options, baseDirectory: nil)
            configuration.resolver = resolver
            return APNsProvider(name: "apns", configuration: configuration, clock: clock)
        },
        send: { s, i in
            try await s.ios(TestServer.haBody(token: String(format: "%064x", i + 1), appID: "io.robbie.HomeAssistant")).status
        },
        delivered: { env in
            env.apns.records.filter { $0.status == 200 }.compactMap { record in
                record.deviceToken.flatMap { Int($0, radix: 16) }.map { ($0 - 1, record.request.connectionID) }
            }
        }
    )

    /// Sends notifications `range`, `concurrency` at a time, each started when an earlier one is answered; returns each
    /// one's status.
    static func flood(
        _ s: TestServer,
        _ range: Range<Int>,
        concurrency: Int,
        send: @escaping @Sendable (TestServer, Int) async throws -> Int
    )
        async throws -> [Int: Int]
    {
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            var statuses: [Int: Int] = [:]
            var next = range.lowerBound
            func add() {
                let i = next
                next += 1
                group.addTask { (i, try await send(s, i)) }
            }
            while next < min(range.lowerBound + concurrency, range.upperBound) { add() }
            while let (i, status) = try await group.next() {
                statuses[i] = status
                if next < range.upperBound { add() }
            }
            return statuses
        }
    }

    @Test(arguments: ["fcm", "apns"])
    func aNewConnectionGoesToTheHostsNewAddressAndNothingIsSentTwice(_ name: String) async throws {
        let provider = name == "fcm" ? Self.fcm : Self.apns
        let clock = ManualClock("2026-11-21T12:00:00Z", timers: .real)
        let directory = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let env = try await FakeProviderEnvironment.start(directory: directory, clock: clock)
        // The host's old and new front end: one port, two addresses, both in front of the one fake (so that its OAuth
        // tokens and records are shared).
        let old = FakeTCPProxy()
        let new = FakeTCPProxy()
        let dns = FakeDNS()
        do {
            let port = try await old.start(host: "127.0.0.1")
            _ = try await new.start(host: "127.0.0.2", port: port)
            try old.forward(toPort: provider.fakePort(env))
            try new.forward(toPort: provider.fakePort(env))
            dns.set("localhost", to: ["127.0.0.1"])
            let instance = try provider.make(env, "https://localhost:\(port)", ProviderResolver(dns.resolver(on:)), clock)
            try await TestServer.with(
                clock: clock,
                providers: [provider.name: instance],
                configure: { c in
                    c.apps = [provider.app]
                    c.usingDefaultApps = false
                    c.metricsEnabled = true
                    c.quota.dailyLimit = 100_000
                    c.delivery.retryBaseMs = 5
                }
            ) { s in
                // Before the move: one connection, to the old address.
                let before = try await Self.flood(s, 0..<20, concurrency: 4, send: provider.send)
                #expect(before.count == 20 && before.values.allSatisfy { $0 == 201 }, "\(before)")
                #expect(old.acceptedConnections == 1 && new.acceptedConnections == 0)
                #expect(dns.lookups(of: "localhost") == 1)

                // The move: the name answers the new address, the old front end takes no new connection, and 5 streams
                // later it rotates the open one with a graceful GOAWAY and closes it.
                dns.set("localhost", to: ["127.0.0.2"])
                await old.stopListening()
                provider.frontEnd(env).set {
                    $0.goAwayEvery = 25
                    $0.goAwayLimit = 1
                    $0.goAwayCloseAfter = .milliseconds(300)
                }
                let after = try await Self.flood(s, 20..<60, concurrency: 8, send: provider.send)
                #expect(after.count == 40 && after.values.allSatisfy { $0 == 201 }, "\(after.filter { $0.value != 201 })")
                #expect(provider.frontEnd(env).goAwaysSent == 1)

                // Every notification delivered exactly once, across both front ends.
                let delivered = provider.delivered(env)
                let counts = Dictionary(delivered.map { ($0.number, 1) }, uniquingKeysWith: +)
                #expect(counts.count == 60 && Set(counts.keys) == Set(0..<60), "each delivered")
                #expect(counts.values.allSatisfy { $0 == 1 }, "none twice: \(counts.filter { $0.value > 1 }.keys.sorted())")

                // One connection to each address, each opened after looking the name up again.
                #expect(old.acceptedConnections == 1 && new.acceptedConnections == 1)
                #expect(dns.lookups(of: "localhost") == 2)
                let connections = Dictionary(grouping: delivered) { $0.connectionID }
                #expect(connections.count == 2, "\(connections.keys.sorted())")
                let first = delivered.first { $0.number == 0 }?.connectionID
                let moved = connections.filter { $0.key != first }.values.first ?? []
                #expect(delivered.filter { $0.number < 20 }.allSatisfy { $0.connectionID == first }, "before the move: the old address")
                #expect((connections[first ?? 0]?.count ?? 0) >= 25, "the old connection answered up to its GOAWAY")
                // Each of the last ten started after at least 23 answers since the move, at most 12 of them (5 up to the
                // GOAWAY, 7 more in flight) on the old connection: the new one was in use by then.
                #expect(Set(50..<60).isSubset(of: Set(moved.map(\.number))), "the later ones reached the new address")

                let metrics = try await s.request(.GET, "/metrics").rawBody
                #expect(metrics.contains(#"pushrelay_provider_connections_rotated_total{provider="\#(provider.name)"} 1"#), "\(metrics)")
            }
        } catch {
            await Self.stop(env, old, new)
            throw error
        }
        await Self.stop(env, old, new)
    }

    static func stop(_ env: FakeProviderEnvironment, _ proxies: FakeTCPProxy...) async {
        for proxy in proxies { await proxy.shutdown() }
        await env.shutdown()
    }
}
