import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

/// Wall clock: sends over real TLS + HTTP/2 to the fake APNs, whose handshakes take real time.
@Suite struct APNsProviderTokenTests {
    @Test func oneProviderTokenIsSharedUntilItIsFiftyMinutesOld() async throws {
        try await withAPNs { fake, provider, clock in
            _ = try await provider.send(apnsDelivery(token: deviceToken(1)))
            clock.advance(by: 19 * 60)
            _ = try await provider.send(apnsDelivery(token: deviceToken(2)))
            clock.advance(by: 30 * 60 + 59)  // 49:59 old
            _ = try await provider.send(apnsDelivery(token: deviceToken(3)))
            #expect(Set(fake.records.compactMap(\.providerToken)).count == 1)
            #expect(provider.providerTokensGenerated == 1)

            clock.advance(by: 1)  // 50:00 old
            _ = try await provider.send(apnsDelivery(token: deviceToken(4)))
            let tokens = fake.records.compactMap(\.providerToken)
            #expect(Set(tokens).count == 2)
            #expect(tokens[3] != tokens[2])
            #expect(provider.providerTokensGenerated == 2)
            #expect(fake.records.allSatisfy { $0.status == 200 })
        }
    }

    @Test func theProviderTokenHasWholeSecondClaimsAndTheConfiguredKeyID() async throws {
        try await withAPNs(clock: ManualClock(Date(timeIntervalSince1970: 1_800_000_000.75), timers: .real)) { fake, provider, _ in
            _ = try await provider.send(apnsDelivery(token: deviceToken(1)))
            let jwt = try #require(fake.records.first?.providerToken.flatMap(InspectedJWT.init))
            #expect(jwt.header == ["alg": "ES256", "kid": .string(Shared.apnsKey.keyID)])
            #expect(jwt.claims == ["iss": .string(Shared.apnsKey.teamID), "iat": 1_800_000_000])
            #expect(jwt.verifiesES256(with: Shared.apnsKey.publicKey))
        }
    }

    @Test func expiredProviderTokenRegeneratesOnceAndRetriesWithTheSameAPNsID() async throws {
        // APNs' clock runs 55 minutes ahead of ours: our 10-minute-old token looks 65 minutes old to it.
        let ours = ManualClock(timers: .real)
        let apple = ManualClock(ours.now())
        try await withAPNs(clock: ours, fakeClock: apple) { fake, provider, _ in
            _ = try await provider.send(apnsDelivery(token: deviceToken(1)))
            ours.advance(by: 10 * 60)
            apple.advance(by: 65 * 60)
            let receipt = try await provider.send(apnsDelivery(token: deviceToken(2)))

            let records = fake.records
            try #require(records.count == 3)
            #expect(records[1].status == 403)
            #expect(records[1].reason == "ExpiredProviderToken")
            #expect(records[2].status == 200)
            #expect(records[1].headers["apns-id"] == records[2].headers["apns-id"])
            #expect(records[2].headers["apns-id"] == receipt.messageID)
            #expect(records[1].providerToken == records[0].providerToken)
            #expect(records[2].providerToken != records[1].providerToken)
            #expect(records[1].request.body == records[2].request.body)
            #expect(provider.providerTokensGenerated == 2)
        }
    }

    @Test func forcedRegenerationIsNotRepeatedWithinTwentyMinutes() async throws {
        try await withAPNs { fake, provider, clock in
            let token = deviceToken(1)
            fake.script(token, Array(repeating: .reject(status: 403, reason: "ExpiredProviderToken"), count: 5))

            let first = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            guard case .configuration(let message)? = first else {
                Issue.record("got \(String(describing: first))")
                return
            }
            #expect(message.contains("clock"))
            #expect(fake.records.count == 2)  // the original and one retry with a new token
            #expect(provider.providerTokensGenerated == 2)

            clock.advance(by: 19 * 60)
            _ = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            #expect(fake.records.count == 3)  // no second forced regeneration inside 20 minutes, so no retry
            #expect(provider.providerTokensGenerated == 2)

            clock.advance(by: 60)
            _ = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            #expect(fake.records.count == 5)
            #expect(provider.providerTokensGenerated == 3)
            // Never more than one change per connection inside 20 minutes, so APNs never answered 429.
            #expect(!fake.records.contains { $0.status == 429 })
        }
    }

    @Test func concurrentExpiredAnswersRegenerateOnlyOnce() async throws {
        let ours = ManualClock(timers: .real)
        let apple = ManualClock(ours.now())
        try await withAPNs(clock: ours, fakeClock: apple) { fake, provider, _ in
            _ = try await provider.send(apnsDelivery(token: deviceToken(0)))
            ours.advance(by: 5 * 60)
            apple.advance(by: 61 * 60)
            try await withThrowingTaskGroup(of: DeliveryReceipt.self) { group in
                for i in 1...12 { group.addTask { try await provider.send(apnsDelivery(token: deviceToken(i))) } }
                for try await _ in group {}
            }
            #expect(provider.providerTokensGenerated == 2)
            #expect(Set(fake.records.compactMap(\.providerToken)).count == 2)
            #expect(!fake.records.contains { $0.status == 429 })
        }
    }
}
