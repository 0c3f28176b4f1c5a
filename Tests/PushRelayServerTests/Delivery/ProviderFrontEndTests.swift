import Foundation
import PushRelayCore
import PushRelayServer
import PushRelayTestSupport
import Testing

/// What Google's and Apple's front ends do to connections, each against the fake FCM over TLS and HTTP/2 with that
/// knob turned: Home Assistant notifications with distinct tokens, many at once, and for each behaviour how many were
/// delivered, how many twice, and what the callers were told (counts, not timings).
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

    /// How many times each token reached the fake.
    static func deliveries(_ fcm: FakeFCM) -> [String: Int] {
        var seen: [String: Int] = [:]
        for record in fcm.records where record.path.hasSuffix("messages:send") {
            if let token = record.body?["message"]?["token"]?.stringValue { seen[token, default: 0] += 1 }
        }
        return seen
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

    @Test func aGracefulGoAwayNeverSendsANotificationTwice() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            env.fcm.frontEnd.set {
                $0.goAwayEvery = 40
                $0.goAwayCloseAfter = .milliseconds(300)
            }
            let answers = try await Self.flood(s, count: 300, concurrency: 24, prefix: "goaway")
            #expect(answers.values.filter { $0.0 == 201 }.count == 300)
            let seen = Self.deliveries(env.fcm)
            #expect(seen.count == 300, "every notification delivered")
            #expect(seen.values.allSatisfy { $0 == 1 }, "none twice: \(seen.filter { $0.value > 1 }.keys.sorted())")
            #expect(env.fcm.frontEnd.goAwaysSent >= 5)
            #expect(env.fcm.acceptedConnections >= 6)
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_connections_rotated_total{provider="fcm"} \#(env.fcm.frontEnd.goAwaysSent)"#), "\(metrics)")
        }
    }

    @Test func aGoAwayWithAnErrorFromAPNsAlsoLosesAndRepeatsNothing() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            env.apns.frontEnd.set {
                $0.goAwayEvery = 25
                $0.goAwayCloseAfter = .milliseconds(300)
                $0.goAwayError = (.internalError, #"{"reason":"Shutdown"}"#)
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
            let paths = env.apns.records.filter { $0.status == 200 }.map(\.path)
            #expect(paths.count == 100 && Set(paths).count == 100, "each device once")
            #expect(env.apns.frontEnd.goAwaysSent >= 3)
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

    @Test func refusedStreamsAreSentAgainOnceAndDeliveredOnce() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            env.fcm.frontEnd.set { $0.refuseEvery = 7 }
            let answers = try await Self.flood(s, count: 210, concurrency: 16, prefix: "refused")
            #expect(answers.values.filter { $0.0 == 201 }.count == 210)
            let seen = Self.deliveries(env.fcm)
            #expect(seen.count == 210 && seen.values.allSatisfy { $0 == 1 })
            let refused = env.fcm.frontEnd.refusedStreams
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

    @Test func aResetAfterProcessingIsAnsweredPossiblyDeliveredAndNotSentAgain() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            env.fcm.frontEnd.set { $0.resetAfterProcessingEvery = 10 }
            let answers = try await Self.flood(s, count: 100, concurrency: 8, prefix: "reset")
            let reset = answers.values.filter { $0.0 == 503 }
            #expect(reset.count == 10 && reset.allSatisfy { $0.1 == "StreamReset" })
            #expect(answers.values.filter { $0.0 == 201 }.count == 90)
            let seen = Self.deliveries(env.fcm)
            #expect(seen.count == 100 && seen.values.allSatisfy { $0 == 1 }, "each processed once, the reset ones too")
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_possibly_delivered_total{provider="fcm"} 10"#), "\(metrics)")
        }
    }

    @Test func oneStreamAtATimeThenMore() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            // APNs starts a connection at one stream and raises it later.
            env.fcm.frontEnd.set { $0.maxConcurrentStreams = 1 }
            let first = try await Self.flood(s, count: 40, concurrency: 8, prefix: "one")
            #expect(first.values.allSatisfy { $0.0 == 201 })
            env.fcm.frontEnd.changeMaxConcurrentStreams(to: 100)
            let second = try await Self.flood(s, count: 40, concurrency: 8, prefix: "more")
            #expect(second.values.allSatisfy { $0.0 == 201 })
            let seen = Self.deliveries(env.fcm)
            #expect(seen.count == 80 && seen.values.allSatisfy { $0 == 1 })
            #expect(env.fcm.acceptedConnections == 1, "no connection was given up for it")
        }
    }

    @Test func anOAuthTokenEndedEarlyIsRefreshedAndEveryNotificationDeliveredOnce() async throws {
        try await withProviderFakes(configure: Self.configure) { s, env in
            let before = try await Self.flood(s, count: 20, concurrency: 8, prefix: "oauth-before")
            env.fcm.revokeAccessTokens()
            let after = try await Self.flood(s, count: 40, concurrency: 8, prefix: "oauth-after")
            #expect((Array(before.values) + Array(after.values)).allSatisfy { $0.0 == 201 })
            let seen = Self.deliveries(env.fcm).filter { $0.key.hasPrefix("oauth") }
            // A send refused with 401 was not processed: it is sent again with the new token, so it reached the fake twice,
            // once refused; every notification was accepted exactly once.
            let accepted = env.fcm.records.filter { $0.status == 200 }.compactMap { $0.body?["message"]?["token"]?.stringValue }
            #expect(accepted.count == 60 && Set(accepted).count == 60)
            #expect(seen.count == 60)
            #expect(env.fcm.tokenRequests == 2)
        }
    }

    @Test func aSilentConnectionIsFoundDeadAndTheNextNotificationsGoOnANewOne() async throws {
        let proxy = FakeTCPProxy()
        let proxyPort = try await proxy.start()
        try await withProviderFakes(
            apps: [.init(match: "*", provider: "fcm")],
            configure: Self.configure,
            configureWithFakes: { c, env in
                try? proxy.forward(toPort: env.fcm.port)
                c.providers["fcm"]?.options["endpoint"] = .string("https://127.0.0.1:\(proxyPort)")
            }
        ) { s, env in
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
            #expect(Self.deliveries(env.fcm).filter { $0.key.hasPrefix("after") }.count == 30)
            let metrics = try await s.request(.GET, "/metrics").rawBody
            #expect(metrics.contains(#"pushrelay_provider_connections_dead_total{provider="fcm"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"pushrelay_provider_possibly_delivered_total{provider="fcm"} 6"#))
            #expect(s.logs.lines.filter { $0.level == .warning && $0.description.contains("provider connection found dead") }.count == 1)
        }
        await proxy.shutdown()
    }
}
