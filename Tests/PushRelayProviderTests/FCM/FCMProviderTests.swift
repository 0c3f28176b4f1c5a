import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

/// Wall clock: sends over real TLS + HTTP/2 and HTTP/1.1 to the fake FCM, whose handshakes take real time.
@Suite struct FCMProviderTests {
    @Test(arguments: UpstreamHTTPVersion.allCases) func sendsTheExactUpstreamRequestAndReturnsTheMessageName(_ http: UpstreamHTTPVersion) async throws
    {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            let delivery = androidDelivery(token: fcmToken(1), data: ["tag": "door"])
            let receipt = try await provider.send(delivery)

            let records = fake.records
            try #require(records.count == 1)
            let r = records[0]
            #expect(r.request.method == "POST")
            #expect(r.path == "/v1/projects/pushrelay-test/messages:send")
            #expect(r.headers["authorization"]?.hasPrefix("Bearer ya29.fake-") == true)
            #expect(r.headers["content-type"] == "application/json; charset=utf-8")
            #expect(r.body == ["message": delivery.notification.fcmMessage])
            #expect(r.status == 200)
            #expect(receipt.messageID.hasPrefix("projects/pushrelay-test/messages/0:"))
            #expect(receipt.sentPayload == delivery.notification.fcmMessage)
            #expect(fake.tokenRequests == 1)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func iOSMessagesViaFCMAreAccepted(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            let delivery = iosDelivery(token: fcmToken(2), data: ["push": ["sound": "default"], "url": "/lovelace"])
            _ = try await provider.send(delivery)
            #expect(fake.records.map(\.status) == [200])
            #expect(fake.records.first?.body?["message"]?["apns"] != nil)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func unregisteredTokenIsInvalidToken(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            let token = fcmToken(3)
            fake.script(token, [.unregistered])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: token)) }
            guard case .invalidToken(let reason, let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(reason == "UNREGISTERED")
            #expect(message.contains(TokenDisplay.short(token)))
            #expect(!message.contains(token), "the full token must not leak into messages")
            #expect(message.contains("companion app"))
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func invalidRegistrationTokenIsInvalidToken(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            fake.script(fcmToken(4), [.invalidToken])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(4))) }
            guard case .invalidToken(let reason, _)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(reason == "INVALID_ARGUMENT")
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func otherBadRequestsAreInvalidPayloadWithTheFieldViolation(
        _ http: UpstreamHTTPVersion
    ) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            let token = fcmToken(5)
            let message: JSONValue = ["token": .string(token), "data": ["a": "ok", "b": 5]]
            let delivery = Delivery(platform: .android, pushToken: token, appID: nil, notification: TranslatedNotification(fcmMessage: message))
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(delivery) }
            guard case .invalidPayload(let reason, let text)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(reason == "INVALID_ARGUMENT")
            #expect(text.contains("message.data[1].value"))
            #expect(fake.records.map(\.status) == [400])
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func oversizedMessagesArePayloadTooLarge(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { _, provider, _ in
            let delivery = androidDelivery(token: fcmToken(6), message: String(repeating: "x", count: 5000))
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(delivery) }
            guard case .payloadTooLarge? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func senderIDMismatchIsAConfigurationError(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            fake.script(fcmToken(7), [.senderIDMismatch])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(7))) }
            guard case .configuration(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("SENDER_ID_MISMATCH"))
            #expect(message.contains("fcm-test"))
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func thirdPartyAuthErrorIsConfigurationWithoutATokenRefresh(
        _ http: UpstreamHTTPVersion
    ) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            fake.script(fcmToken(8), [.thirdPartyAuthError])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(8))) }
            guard case .configuration(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("THIRD_PARTY_AUTH_ERROR"))
            // The answer Home Assistant logs says where the APNs key goes.
            #expect(message.contains("Project settings → Cloud Messaging → Apple app configuration"))
            #expect(fake.records.count == 1)
            #expect(fake.tokenRequests == 1)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func throttlingAndServerErrorsAreTransientWithRetryAfter(_ http: UpstreamHTTPVersion) async throws
    {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            let token = fcmToken(9)
            fake.script(token, [.quotaExceeded(retryAfter: 7), .unavailable(retryAfter: 3), .internalError])
            var got: [DeliveryFailure?] = []
            for _ in 0..<3 {
                got.append(await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: token)) })
            }
            guard case .transient(let r1, _, let a1)? = got[0], case .transient(let r2, _, let a2)? = got[1],
                case .transient(let r3, _, let a3)? = got[2]
            else {
                Issue.record("got \(got)")
                return
            }
            #expect((r1, a1) == ("QUOTA_EXCEEDED", 7))
            #expect((r2, a2) == ("UNAVAILABLE", 3))
            #expect(r3 == "INTERNAL")
            #expect(a3 == nil)
            // The scripts are used up: the next send goes through.
            _ = try await provider.send(androidDelivery(token: token))
        }
    }

    /// A connection dropped after the request was written: possibly delivered, not sent again, over both versions.
    @Test(arguments: UpstreamHTTPVersion.allCases) func droppedConnectionsArePossiblyDelivered(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            let token = fcmToken(10)
            fake.script(token, [.dropConnection])
            let dropped = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: token)) }
            guard case .transient(let reason, _, _)? = dropped else {
                Issue.record("got \(String(describing: dropped))")
                return
            }
            #expect(reason == "ConnectionLost")
            #expect(fake.records.count == 1, "sent once, not again")
            #expect(provider.transportFigures?.possiblyDeliveredTotal == 1)
            // The provider recovers on a new connection.
            try await sendRecovering { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: token)) }
            // Over HTTP/1.1 one more: the first handshake learned that the server does not offer HTTP/2.
            #expect(fake.acceptedConnections == (http == .http2 ? 2 : 3))
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func slowAnswersTimeOut(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(extraOptions: ["request_timeout_ms": 500], offerHTTP2: http == .http2) { fake, provider, _ in
            let token = fcmToken(12)
            fake.script(token, [.delayed(milliseconds: 1500, .success)])
            let slow = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: token)) }
            guard case .transient(let reason, _, _)? = slow else {
                Issue.record("got \(String(describing: slow))")
                return
            }
            // On a loaded machine the 500 ms may already run out while connecting (over HTTP/1.1 after learning that
            // the server offers no HTTP/2): that is the connect's own timeout, safe to send again.
            #expect(reason == "Timeout" || reason == "ConnectTimeout")
        }
    }

    @Test func anUnreachableEndpointIsTransient() async throws {
        let clock = ManualClock(timers: .real)
        let fake = FakeFCM(authority: Shared.authority, account: Shared.account, clock: clock)
        try await fake.start()
        let endpoint = fake.endpoint
        let json = fake.serviceAccountJSON
        await fake.shutdown()  // nothing listens there any more
        let provider = try FCMProvider(
            name: "down",
            options: [
                "service_account_json": .string(json), "endpoint": .string(endpoint), "ca_file": .string(Shared.caFile), "request_timeout_ms": 500,
            ],
            baseDirectory: nil,
            clock: clock,
            logger: quietLogger
        )
        let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(11))) }
        await provider.shutdown()
        guard case .transient? = f else {
            Issue.record("got \(String(describing: f))")
            return
        }
    }
}
