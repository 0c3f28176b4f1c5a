import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServer
import PushRelayServerTestRig
import PushRelayTestSupport
import Testing

/// What Google's and Apple's front ends do to connections, each against a provider front end over TLS and HTTP/2 with
/// that knob turned, on two HTTP/2 implementations (swift-nio-http2's fakes and nghttp2's, `FrontEndKind`): Home Assistant notifications with distinct tokens, many at once, and for each behaviour how many were
/// delivered, how many twice, and what the callers were told (counts, not timings).
///
/// Wall clock: GOAWAYs, resets and stream caps on real TLS + HTTP/2 connections of two implementations, drained in real time.
@Suite struct ProviderFrontEndTests {
    /// Posts `count` Android notifications, `concurrency` at a time, with tokens `prefix-0…`; returns each token's status
    /// and answer's `errorCode`.
    static func flood(_ s: TestServer, count: Int, concurrency: Int, prefix: String) async throws -> [String: (Int, String?)] {
        try await withThrowingTaskGroup(of: (String, Int, String?).self) { group in
            var answers: [String: (Int, String?)] = [:]
            var next = 0
            func add() {
                let token = "\(prefix)-\(next)"
                next += 1
                group.addTask {
                    let r = try await s.android(TestServer.haBody(token: token))
                    return (token, r.status, r["errorCode"]?.stringValue)
                }
            }
            while next < min(concurrency, count) { add() }
            while let (token, status, code) = try await group.next() {
                answers[token] = (status, code)
                if next < count { add() }
            }
            return answers
        }
    }

    /// The value of a metric line that starts with `series`, or 0.
    static func value(in metrics: String, _ series: String) -> Int {
        for line in metrics.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Int(Double(line.dropFirst(series.count + 1)) ?? 0)
        }
        return 0
    }

    static func configure(_ c: inout PushRelayConfig) {
        c.metricsEnabled = true
        c.quota.dailyLimit = 100_000
    }

    @Test(arguments: FrontEndKind.allCases)
    func aGracefulGoAwayNeverSendsANotificationTwice(_ kind: FrontEndKind) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            try await frontEnd.set {
                $0.goAwayEvery = 40
                $0.goAwayCloseAfterMs = 300
            }
            let answers = try await Self.flood(s, count: 300, concurrency: 24, prefix: "goaway")
            #expect(answers.values.filter { $0.0 == 201 }.count == 300, "\(answers.filter { $0.value.0 != 201 })")
            let seen = try await frontEnd.deliveries()
            #expect(seen.count == 300, "every notification delivered")
            #expect(seen.values.allSatisfy { $0 == 1 }, "none twice: \(seen.filter { $0.value > 1 }.keys.sorted())")
            let goAways = try await frontEnd.goAwaysSent()
            #expect(goAways >= 5)
            #expect(try await frontEnd.acceptedConnections() >= 6)
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_connections_rotated_total{provider="fcm"} \#(goAways)"#), "\(metrics)")
        }
    }

    /// The case nghttp2 showed: a small stream cap, a GOAWAY every so many streams naming the stream that crossed it,
    /// answers that come late. Streams above the last id are sent again on a new connection, every stream at or below
    /// it is answered on the old one: nothing is lost, nothing is sent twice, nothing is "possibly delivered". (One
    /// stream at a time with delayed answers serialises 400 answers of up to 20 ms; `Benchmarks/goaway.sh` runs it.)
    @Test(arguments: [(FrontEndKind.nghttp2, 8, true), (.nghttp2, 8, false), (.nghttp2, 1, false), (.nghttp2, 100, true), (.nio, 8, false)])
    func aGoAwayUnderAStreamCapLosesNothing(_ kind: FrontEndKind, cap: Int, delayed: Bool) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            try await frontEnd.set {
                $0.maxConcurrentStreams = cap
                $0.goAwayEvery = 50
                $0.goAwayCloseAfterMs = 20
                $0.answerDelayMs = delayed ? 0...20 : nil
            }
            let answers = try await Self.flood(s, count: 400, concurrency: 64, prefix: "cap\(cap)")
            #expect(answers.values.filter { $0.0 == 201 }.count == 400, "\(answers.filter { $0.value.0 != 201 })")
            let seen = try await frontEnd.deliveries()
            #expect(seen.count == 400 && seen.values.allSatisfy { $0 == 1 }, "\(seen.filter { $0.value != 1 })")
            #expect(try await frontEnd.goAwaysSent() >= 4)
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(Self.value(in: metrics, #"pushrelay_provider_possibly_delivered_total{provider="fcm"}"#) == 0)
            // The transport moved or resent each request itself: none needed the dispatcher's backoff.
            #expect(
                Self.value(in: metrics, #"pushrelay_provider_resends_total{provider="fcm",reason="provider_retry"}"#) == 0,
                "\(metrics.split(separator: "\n").filter { $0.hasPrefix("pushrelay_provider_") && $0.contains("fcm") })"
            )
        }
    }

    @Test(arguments: FrontEndKind.allCases)
    func aGoAwayWithAnErrorFromAPNsAlsoLosesAndRepeatsNothing(_ kind: FrontEndKind) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            try await frontEnd.set {
                $0.goAwayEvery = 25
                $0.goAwayCloseAfterMs = 300
                $0.goAwayWithShutdownError = true
            }
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<100 {
                    group.addTask {
                        let token = String(format: "%064x", i + 1)
                        return try await s.ios(TestServer.haBody(token: token, appID: "io.robbie.HomeAssistant")).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(answers.filter { $0 == 201 }.count == 100)
            let paths = try await frontEnd.records().filter { $0.status == 200 && $0.path.hasPrefix("/3/device/") }.map(\.path)
            #expect(paths.count == 100 && Set(paths).count == 100, "each device once")
            #expect(try await frontEnd.goAwaysSent() >= 3)
        }
    }

    @Test func throttlingForTheProjectIsWaitedOutAndForOneDeviceIsNot() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            // The project's quota, with Retry-After: sent again after it, delivered once.
            env.fcm.script("project", [.quotaExceeded(retryAfter: 1)])
            let project = try await s.android(TestServer.haBody(token: "project"))
            #expect(project.status == 201, "\(project.rawBody)")
            #expect(env.fcm.records.filter { $0.body?["message"]?["token"] == "project" }.map(\.status) == [429, 200])
            // One device's rate, with or without Retry-After: answered at once with the provider's figure, not sent again.
            env.fcm.script("device", [.deviceRateExceeded(retryAfter: 30), .deviceRateExceeded(retryAfter: nil)])
            let device = try await s.android(TestServer.haBody(token: "device"))
            expectJSONError(device, status: 503)
            #expect(device.headers["retry-after"] == "30")
            let again = try await s.android(TestServer.haBody(token: "device"))
            expectJSONError(again, status: 503)
            #expect(env.fcm.records.filter { $0.body?["message"]?["token"] == "device" }.count == 2)
        }
    }

    @Test(arguments: FrontEndKind.allCases)
    func refusedStreamsAreSentAgainOnceAndDeliveredOnce(_ kind: FrontEndKind) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            try await frontEnd.set { $0.refuseEvery = 7 }
            let answers = try await Self.flood(s, count: 210, concurrency: 16, prefix: "refused")
            #expect(answers.values.filter { $0.0 == 201 }.count == 210)
            let seen = try await frontEnd.deliveries()
            #expect(seen.count == 210 && seen.values.allSatisfy { $0 == 1 })
            let refused = try await frontEnd.refusedStreams()
            #expect(refused >= 30)
            // Each refused request was sent again: by the transport on a new stream, or, refused there too, after a
            // backoff.
            let metrics = try await s.request(.GET, "/metrics").rawBody
            let resends = ProviderTransportFigures.ResendReason.allCases.map { reason in
                Self.value(in: metrics, #"pushrelay_provider_resends_total{provider="fcm",reason="\#(reason.rawValue)"}"#)
            }
            #expect(resends.reduce(0, +) == refused, "\(resends)")
            #expect(resends[0] > 0)
        }
    }

    @Test(arguments: FrontEndKind.allCases)
    func aResetAfterProcessingIsAnsweredPossiblyDeliveredAndNotSentAgain(_ kind: FrontEndKind) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            try await frontEnd.set { $0.resetAfterProcessingEvery = 10 }
            let answers = try await Self.flood(s, count: 100, concurrency: 8, prefix: "reset")
            let reset = answers.values.filter { $0.0 == 503 }
            #expect(reset.count == 10 && reset.allSatisfy { $0.1 == "StreamReset" }, "\(answers.filter { $0.value.0 != 201 })")
            #expect(answers.values.filter { $0.0 == 201 }.count == 90)
            let seen = try await frontEnd.deliveries()
            #expect(seen.count == 100 && seen.values.allSatisfy { $0 == 1 }, "each processed once, the reset ones too")
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_possibly_delivered_total{provider="fcm"} 10"#), "\(metrics)")
        }
    }

    @Test(arguments: FrontEndKind.allCases)
    func oneStreamAtATimeThenMore(_ kind: FrontEndKind) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            // APNs starts a connection at one stream and raises it later.
            try await frontEnd.set { $0.maxConcurrentStreams = 1 }
            let first = try await Self.flood(s, count: 40, concurrency: 8, prefix: "one")
            #expect(first.values.allSatisfy { $0.0 == 201 })
            try await frontEnd.changeMaxConcurrentStreams(to: 100)
            let second = try await Self.flood(s, count: 40, concurrency: 8, prefix: "more")
            #expect(second.values.allSatisfy { $0.0 == 201 })
            let seen = try await frontEnd.deliveries()
            #expect(seen.count == 80 && seen.values.allSatisfy { $0 == 1 })
            #expect(try await frontEnd.acceptedConnections() == 1, "no connection was given up for it")
        }
    }

    @Test(arguments: FrontEndKind.allCases)
    func anOAuthTokenEndedEarlyIsRefreshedAndEveryNotificationDeliveredOnce(_ kind: FrontEndKind) async throws {
        try await withFrontEnd(kind, configure: Self.configure) { s, frontEnd in
            let before = try await Self.flood(s, count: 20, concurrency: 8, prefix: "oauth-before")
            try await frontEnd.revokeAccessTokens()
            let after = try await Self.flood(s, count: 40, concurrency: 8, prefix: "oauth-after")
            #expect((Array(before.values) + Array(after.values)).allSatisfy { $0.0 == 201 })
            let seen = try await frontEnd.deliveries().filter { $0.key.hasPrefix("oauth") }
            // A send refused with 401 was not processed: it is sent again with the new token, so it reached the fake twice,
            // once refused; every notification was accepted exactly once.
            let accepted = try await frontEnd.records().filter { $0.status == 200 }.compactMap(\.token)
            #expect(accepted.count == 60 && Set(accepted).count == 60)
            #expect(seen.count == 60)
            #expect(try await frontEnd.tokenRequests() == 2)
        }
    }

    @Test(arguments: FrontEndKind.allCases)
    func aSilentConnectionIsFoundDeadAndTheNextNotificationsGoOnANewOne(_ kind: FrontEndKind) async throws {
        let proxy = FakeTCPProxy()
        let proxyPort = try await proxy.start()
        try await withFrontEnd(
            kind,
            apps: [.init(match: "*", provider: "fcm")],
            configure: Self.configure,
            configureWithFrontEnd: { c, frontEnd in
                try? proxy.forward(toPort: frontEnd.fcmPort)
                c.providers["fcm"]?.options["endpoint"] = .string("https://127.0.0.1:\(proxyPort)")
            }
        ) { s, frontEnd in
            let warm = try await Self.flood(s, count: 10, concurrency: 4, prefix: "warm")
            #expect(warm.values.allSatisfy { $0.0 == 201 })
            // The NAT forgets the flow: the open connection carries nothing more, and says nothing.
            proxy.blackHole()
            let lost = try await Self.flood(s, count: 6, concurrency: 6, prefix: "lost")
            #expect(lost.values.allSatisfy { $0.0 == 503 && $0.1 == "ConnectionLost" }, "\(lost)")
            // Found dead: the next notifications go on a new connection.
            let after = try await Self.flood(s, count: 30, concurrency: 6, prefix: "after")
            #expect(after.values.allSatisfy { $0.0 == 201 }, "\(after.filter { $0.value.0 != 201 })")
            #expect(proxy.acceptedConnections == 2)
            #expect(try await frontEnd.deliveries().filter { $0.key.hasPrefix("after") }.count == 30)
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_connections_dead_total{provider="fcm"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"pushrelay_provider_possibly_delivered_total{provider="fcm"} 6"#))
            #expect(s.logs.lines.filter { $0.level == .warning && $0.description.contains("provider connection found dead") }.count == 1)
        }
        await proxy.shutdown()
    }
}
