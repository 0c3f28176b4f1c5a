import NIOCore
import PushRelayCore
import PushRelayTestSupport
import Testing

@testable import PushRelayProviders

/// The provider transport against the strict fakes over real TLS: one HTTP/2 connection carries every request,
/// GOAWAY and resets are handled as HTTP/2 servers mean them, and a server without HTTP/2 is served over HTTP/1.1.
///
/// Wall clock: real TLS + HTTP/2 connections to the fakes; one that stops answering is given up after a PING unanswered for 3 s.
@Suite struct ProviderHTTPClientTests {
    /// More than the fake's 100 concurrent streams: the rest wait in the HTTP/2 handler, on the same connection.
    @Test func concurrentRequestsShareOneConnection() async throws {
        try await withAPNs { fake, provider, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<120 {
                    group.addTask { _ = try await provider.send(apnsDelivery(token: deviceToken(1_000 + n))) }
                }
                try await group.waitForAll()
            }
            #expect(fake.records.count == 120)
            #expect(fake.records.allSatisfy { $0.status == 200 })
            #expect(fake.acceptedConnections == 1)
        }
    }

    @Test func aGoAwayBeforeProcessingIsSentAgainOnANewConnection() async throws {
        try await withAPNs { fake, provider, _ in
            let token = deviceToken(20)
            _ = try await provider.send(apnsDelivery(token: deviceToken(21)))
            fake.script(token, [.goAway])
            let receipt = try await provider.send(apnsDelivery(token: token))
            #expect(!receipt.messageID.isEmpty)
            #expect(fake.records.map(\.status) == [200, 0, 200])
            #expect(fake.records.map(\.reason) == [nil, "GoAway", nil])
            #expect(fake.acceptedConnections == 2)
            // Both attempts carried the same apns-id: the same notification, sent once more.
            #expect(fake.records[1].headers["apns-id"] == fake.records[2].headers["apns-id"])
        }
    }

    /// A reset after the request was written may follow its processing: it is answered as possibly delivered.
    @Test func aResetStreamIsPossiblyDeliveredAndTheConnectionStays() async throws {
        try await withAPNs { fake, provider, _ in
            let token = deviceToken(30)
            fake.script(token, [.resetStream])
            let reset = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            guard case .transient(let reason, let message, _)? = reset else {
                Issue.record("got \(String(describing: reset))")
                return
            }
            #expect(reason == "StreamReset")
            #expect(reset?.mayHaveBeenDelivered == true)
            #expect(message.contains("reset the request") && message.contains("not sent again"))
            #expect(!message.contains(token))
            _ = try await provider.send(apnsDelivery(token: token))
            #expect(fake.acceptedConnections == 1)
        }
    }

    @Test func aServerWithoutHTTP2IsServedOverHTTP1() async throws {
        try await withFCM(offerHTTP2: false) { fake, provider, _ in
            _ = try await provider.send(androidDelivery(token: fcmToken(1)))
            _ = try await provider.send(androidDelivery(token: fcmToken(2)))
            #expect(fake.records.count == 2)
            #expect(await provider.tokenSource.tokenRequests == 1)
        }
    }

    @Test func anUntrustedCertificateIsAConnectionErrorNamingOnlyTheHost() async throws {
        try await withAPNs(extraOptions: ["ca_file": .null]) { fake, provider, _ in
            let token = deviceToken(40)
            let refused = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            guard case .transient(let reason, let message, _)? = refused else {
                Issue.record("got \(String(describing: refused))")
                return
            }
            #expect(reason == "ConnectionError")
            #expect(message.contains(fake.endpoint))
            // The TLS error itself, so that an operator sees why.
            #expect(message.contains("CERTIFICATE_VERIFY_FAILED"), "\(message)")
            #expect(!message.contains(token))
            #expect(fake.records.isEmpty)
        }
    }
}
