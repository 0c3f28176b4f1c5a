import NIOCore
import NIOPosix
import NIOSSL
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayTestSupport
import Testing

@testable import PushRelayProviders

/// The HTTP/1.1 pool against a real server on loopback: connections kept alive and reused, at most `maxConnections`
/// per origin with the rest waiting in turn, `Connection: close` and hung answers honoured, deadlines kept while
/// waiting, the host looked up again for each new connection, and a checked address connected to without resolving
/// the host again.
@Suite struct UpstreamHTTP1PoolTests {
    private func withPool(
        maxConnections: Int = 8,
        resolver: ProviderResolver = .system,
        _ body: (PlainHTTPServer, UpstreamHTTP1Pool) async throws -> Void
    ) async throws {
        let server = try await PlainHTTPServer()
        let pool = UpstreamHTTP1Pool(
            tls: .makeClientConfiguration(),
            group: MultiThreadedEventLoopGroup.singleton,
            maxConnections: maxConnections,
            connectTimeout: .seconds(5),
            idleTimeout: .minutes(1),
            clock: EventLoopClock(),
            resolver: resolver
        )
        do {
            try await body(server, pool)
        } catch {
            await pool.shutdown()
            await server.shutdown()
            throw error
        }
        await pool.shutdown()
        await server.shutdown()
    }

    private func request(_ path: String, on server: PlainHTTPServer, host: String = "127.0.0.1", body: String = #"{"n":1}"#) -> UpstreamRequest {
        UpstreamRequest(
            origin: UpstreamOrigin(secure: false, host: host, port: server.port),
            path: path,
            headers: [(name: "content-type", value: "application/json")],
            body: ByteBuffer(string: body)
        )
    }

    private func deadline(_ amount: TimeAmount = .seconds(20)) -> ContinuousClock.Instant { EventLoopClock().instant + Duration(amount) }

    @Test func sequentialRequestsShareOneKeptAliveConnection() async throws {
        try await withPool { server, pool in
            for n in 0..<5 {
                let answer = try await pool.execute(request("/send/\(n)", on: server, body: "{\"n\":\(n)}"), deadline: deadline()).get()
                #expect(answer.status == 200)
                #expect(String(decoding: answer.body, as: UTF8.self) == #"{"name":"ok"}"#)
            }
            #expect(server.acceptedConnections == 1)
            #expect(server.requests.map(\.uri) == (0..<5).map { "/send/\($0)" })
            #expect(server.requests.map(\.body) == (0..<5).map { "{\"n\":\($0)}" })
            #expect(server.requests.allSatisfy { $0.method == "POST" && $0.host == "127.0.0.1:\(server.port)" })
        }
    }

    @Test func concurrentRequestsOpenAtMostMaxConnectionsAndTheRestWaitTheirTurn() async throws {
        try await withPool(maxConnections: 3) { server, pool in
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<12 {
                    group.addTask { try await pool.execute(request("/slow/\(n)", on: server), deadline: deadline()).get().status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers == Array(repeating: 200, count: 12))
            #expect(server.acceptedConnections == 3)
            #expect(pool.openConnections(to: UpstreamOrigin(secure: false, host: "127.0.0.1", port: server.port)) == 3)
        }
    }

    @Test func anAnswerSayingCloseIsNotReused() async throws {
        try await withPool { server, pool in
            for n in 0..<3 {
                let status = try await pool.execute(request("/close/\(n)", on: server), deadline: deadline()).get().status
                #expect(status == 200)
            }
            #expect(server.acceptedConnections == 3)
            let status = try await pool.execute(request("/send", on: server), deadline: deadline()).get().status
            #expect(status == 200)
            #expect(server.acceptedConnections == 4)
        }
    }

    @Test func aHungAnswerTimesOutAndItsConnectionIsReplaced() async throws {
        try await withPool(maxConnections: 1) { server, pool in
            await #expect(throws: UpstreamStreamFailure.timedOut) {
                try await pool.execute(request("/silent", on: server), deadline: deadline(.milliseconds(300))).get()
            }
            let status = try await pool.execute(request("/send", on: server), deadline: deadline()).get().status
            #expect(status == 200)
            #expect(server.acceptedConnections == 2)
        }
    }

    @Test func aRequestStillWaitingForAConnectionAtItsDeadlineFails() async throws {
        try await withPool(maxConnections: 1) { server, pool in
            let hung = pool.execute(request("/silent", on: server), deadline: deadline(.seconds(30)))
            await #expect(throws: UpstreamStreamFailure.timedOut) {
                try await pool.execute(request("/send", on: server), deadline: deadline(.milliseconds(300))).get()
            }
            #expect(server.requests.map(\.uri) == ["/silent"], "the waiting request was never sent")
            await pool.shutdown()
            await #expect(throws: (any Error).self) { try await hung.get() }
        }
    }

    @Test func aCheckedAddressIsConnectedToWithoutResolvingTheHostAgain() async throws {
        try await withPool { server, pool in
            var pinned = request("/send", on: server, host: "pushrelay-test.invalid")
            // The first address takes no connection (nothing listens on ::1 here, or there is no IPv6): the next is tried.
            pinned.pin(to: [OutboundAddressPolicy.Address("::1")!, OutboundAddressPolicy.Address("127.0.0.1")!])
            let status = try await pool.execute(pinned, deadline: deadline()).get().status
            #expect(status == 200)
            #expect(server.requests.map(\.host) == ["pushrelay-test.invalid:\(server.port)"])
        }
    }

    /// The host moves to another address (here a proxy on the same port at 127.0.0.2) while a connection is open:
    /// that connection carries on, and the next one goes to the new address. A pinned request asks nobody.
    @Test func eachNewConnectionLooksTheHostUpAgain() async throws {
        let dns = FakeDNS()
        dns.set("provider.test", to: ["127.0.0.1"])
        try await withPool(resolver: ProviderResolver(dns.resolver(on:))) { server, pool in
            let moved = FakeTCPProxy()
            _ = try await moved.start(host: "127.0.0.2", port: server.port)
            try moved.forward(toPort: server.port)
            #expect(try await pool.execute(request("/send", on: server, host: "provider.test"), deadline: deadline()).get().status == 200)
            dns.set("provider.test", to: ["127.0.0.2"])
            #expect(try await pool.execute(request("/close", on: server, host: "provider.test"), deadline: deadline()).get().status == 200)
            #expect(try await pool.execute(request("/send", on: server, host: "provider.test"), deadline: deadline()).get().status == 200)
            #expect(dns.lookups(of: "provider.test") == 2)
            #expect(server.acceptedConnections == 2 && moved.acceptedConnections == 1)
            var pinned = request("/send", on: server, host: "pinned.test")
            pinned.pin(to: [OutboundAddressPolicy.Address("127.0.0.1")!])
            #expect(try await pool.execute(pinned, deadline: deadline()).get().status == 200)
            #expect(dns.lookups(of: "pinned.test") == 0)
            await moved.shutdown()
        }
    }

    @Test func afterShutdownRequestsFail() async throws {
        try await withPool { server, pool in
            await pool.shutdown()
            await #expect(throws: CancellationError.self) { try await pool.execute(request("/send", on: server), deadline: deadline()).get() }
            #expect(server.requests.isEmpty)
        }
    }
}
