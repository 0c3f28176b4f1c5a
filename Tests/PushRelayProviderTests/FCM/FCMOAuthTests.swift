import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

/// Wall clock: token fetches over real TLS to the fake's OAuth endpoint, whose handshakes take real time.
@Suite struct FCMOAuthTests {
    @Test(arguments: UpstreamHTTPVersion.allCases) func theAccessTokenIsCachedAcrossRequests(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, clock in
            for i in 0..<5 {
                _ = try await provider.send(androidDelivery(token: fcmToken(i)))
                clock.advance(by: 60)
            }
            #expect(fake.tokenRequests == 1)
            #expect(Set(fake.records.compactMap(\.accessToken)).count == 1)
            #expect(await provider.tokenSource.tokenRequests == 1)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func theTokenIsRefreshedFiveMinutesBeforeItExpires(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(lifetime: 3600, offerHTTP2: http == .http2) { fake, provider, clock in
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            clock.advance(by: 3600 - 300 - 1)
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            #expect(fake.tokenRequests == 1)
            clock.advance(by: 2)
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            #expect(fake.tokenRequests == 2)
            let bearers = fake.records.compactMap(\.accessToken)
            #expect(bearers[0] == bearers[1])
            #expect(bearers[1] != bearers[2])
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func shortLivedTokensAreRefreshedAtHalfTheirLifetime(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(lifetime: 120, offerHTTP2: http == .http2) { fake, provider, clock in
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            clock.advance(by: 59)
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            #expect(fake.tokenRequests == 1)
            clock.advance(by: 2)
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            #expect(fake.tokenRequests == 2)
            #expect(fake.records.allSatisfy { $0.status == 200 })
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func an401RenewsTheTokenAndRetriesOnce(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            fake.revokeAccessTokens()
            let receipt = try await provider.send(androidDelivery(token: fcmToken(2)))
            #expect(receipt.messageID.hasPrefix("projects/"))
            let records = fake.records
            #expect(records.map(\.status) == [200, 401, 200])
            #expect(records[1].accessToken == records[0].accessToken)
            #expect(records[2].accessToken != records[1].accessToken)
            #expect(records[1].body == records[2].body)
            #expect(fake.tokenRequests == 2)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func aPersistent401IsAConfigurationErrorAfterOneRetry(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            fake.script(fcmToken(1), [.unauthenticated, .unauthenticated, .unauthenticated])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(1))) }
            guard case .configuration(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("access token"))
            #expect(fake.records.count == 2)
            #expect(fake.tokenRequests == 2)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func concurrentRequestsShareOneTokenFetch(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            try await withThrowingTaskGroup(of: DeliveryReceipt.self) { group in
                for i in 0..<24 {
                    group.addTask { try await provider.send(androidDelivery(token: fcmToken(i))) }
                }
                for try await _ in group {}
            }
            #expect(fake.tokenRequests == 1)
            #expect(fake.records.count == 24)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func concurrent401sShareOneRenewal(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            _ = try await provider.send(androidDelivery(token: fcmToken(0)))
            fake.revokeAccessTokens()
            try await withThrowingTaskGroup(of: DeliveryReceipt.self) { group in
                for i in 0..<16 {
                    group.addTask { try await provider.send(androidDelivery(token: fcmToken(i))) }
                }
                for try await _ in group {}
            }
            #expect(fake.tokenRequests == 2)
            #expect(fake.records.filter { $0.status == 200 }.count == 17)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func arejectedServiceAccountIsAConfigurationError(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            fake.failTokenRequests([.invalidGrant])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(1))) }
            guard case .configuration(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("invalid_grant"))
            #expect(message.contains(Shared.account.clientEmail))
            #expect(fake.records.isEmpty)
            // The next request fetches again and succeeds.
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func anUnavailableTokenEndpointIsTransient(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(offerHTTP2: http == .http2) { fake, provider, _ in
            fake.failTokenRequests([.unavailable])
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: fcmToken(1))) }
            guard case .transient(let reason, _, let retryAfter)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(reason == "OAuthUnavailable")
            #expect(retryAfter == 1)
        }
    }

    @Test(arguments: UpstreamHTTPVersion.allCases) func aFailedRefreshKeepsUsingTheStillValidToken(_ http: UpstreamHTTPVersion) async throws {
        try await withFCM(lifetime: 3600, offerHTTP2: http == .http2) { fake, provider, clock in
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            clock.advance(by: 3400)  // inside the refresh margin, not yet expired
            fake.failTokenRequests([.unavailable])
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            #expect(fake.tokenRequests == 2)
            #expect(Set(fake.records.compactMap(\.accessToken)).count == 1)
        }
    }
}
