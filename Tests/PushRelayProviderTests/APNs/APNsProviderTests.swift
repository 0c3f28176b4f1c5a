import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

/// Wall clock: sends over real TLS + HTTP/2 to the fake APNs, whose handshakes take real time.
@Suite struct APNsProviderTests {
    @Test func sendsTheExactUpstreamRequest() async throws {
        try await withAPNs { fake, provider, _ in
            let token = deviceToken(1)
            let delivery = iosDelivery(token: token, data: ["url": "/lovelace/cameras", "tag": "door"])
            let receipt = try await provider.send(delivery)

            let records = fake.records
            try #require(records.count == 1)
            let r = records[0]
            #expect(r.status == 200)
            #expect(r.request.method == "POST")
            #expect(r.path == "/3/device/\(token)")
            let apns = try #require(delivery.notification.apns)
            var expectedHeaders = apns.headers
            expectedHeaders["apns-topic"] = bundleID
            expectedHeaders["apns-id"] = receipt.messageID
            expectedHeaders["content-type"] = "application/json"
            var sent = r.headers
            let authorization = sent.removeValue(forKey: "authorization")
            sent = sent.filter { !["content-length", "user-agent", "host"].contains($0.key) }
            #expect(sent == expectedHeaders)
            #expect(authorization?.hasPrefix("bearer ") == true)
            #expect(r.payload == apns.payload)
            #expect(r.request.body == JSONWriter.bytes(apns.payload))
            #expect(receipt.messageID.count == 36 && receipt.messageID == receipt.messageID.lowercased())
            #expect(receipt.sentPayload["payload"] == apns.payload)
            #expect(receipt.sentPayload["headers"]?["apns-id"] == .string(receipt.messageID))
            #expect(receipt.sentPayload["headers"]?["apns-topic"] == .string(bundleID))
        }
    }

    @Test func backgroundCommandsPassTheStrictPushTypeRules() async throws {
        try await withAPNs { fake, provider, _ in
            let delivery = iosDelivery(token: deviceToken(2), message: "request_location_update", title: nil)
            _ = try await provider.send(delivery)
            let r = try #require(fake.records.first)
            #expect(r.headers["apns-push-type"] == "background")
            #expect(r.headers["apns-priority"] == "5")
            #expect(r.status == 200)
        }
    }

    @Test func connectionsAreReusedAcrossRequests() async throws {
        try await withAPNs { fake, provider, _ in
            for i in 0..<5 { _ = try await provider.send(apnsDelivery(token: deviceToken(i))) }
            try await withThrowingTaskGroup(of: DeliveryReceipt.self) { group in
                for i in 0..<20 { group.addTask { try await provider.send(apnsDelivery(token: deviceToken(100 + i))) } }
                for try await _ in group {}
            }
            #expect(fake.records.count == 25)
            #expect(fake.acceptedConnections == 1)
        }
    }

    @Test func voipUsesTheVoipTopicAndTheLargerLimit() async throws {
        try await withAPNs { fake, provider, _ in
            let big: JSONValue = ["aps": [:], "blob": .string(String(repeating: "v", count: 4600))]
            _ = try await provider.send(
                apnsDelivery(token: deviceToken(3), headers: ["apns-push-type": "voip", "apns-priority": "10"], payload: big)
            )
            #expect(fake.records.first?.headers["apns-topic"] == "\(bundleID).voip")
            #expect(fake.records.first?.status == 200)

            let tooBig: JSONValue = ["aps": [:], "blob": .string(String(repeating: "v", count: 5200))]
            let f = await failure { () async throws(DeliveryFailure) in
                try await provider.send(apnsDelivery(token: deviceToken(3), headers: ["apns-push-type": "voip"], payload: tooBig))
            }
            guard case .payloadTooLarge(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("5120"))
            #expect(fake.records.count == 1)
        }
    }

    @Test func oversizedPayloadsAreRefusedBeforeSending() async throws {
        try await withAPNs { fake, provider, _ in
            let f = await failure { () async throws(DeliveryFailure) in
                try await provider.send(iosDelivery(token: deviceToken(4), message: String(repeating: "x", count: 4200)))
            }
            guard case .payloadTooLarge(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("4096"))
            #expect(fake.records.isEmpty)
        }
    }

    @Test func longCollapseIDsAreRefusedBeforeSending() async throws {
        try await withAPNs { fake, provider, _ in
            let ok = String(repeating: "c", count: 64)
            _ = try await provider.send(apnsDelivery(token: deviceToken(5), headers: ["apns-push-type": "alert", "apns-collapse-id": ok]))
            let tooLong = String(repeating: "é", count: 33)  // 66 bytes
            let f = await failure { () async throws(DeliveryFailure) in
                try await provider.send(apnsDelivery(token: deviceToken(5), headers: ["apns-push-type": "alert", "apns-collapse-id": tooLong]))
            }
            guard case .invalidPayload(let reason, let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(reason == "BadCollapseId")
            #expect(message.contains("64"))
            #expect(fake.records.count == 1)
        }
    }

    @Test func androidNotificationsRoutedToAPNsAreAConfigurationError() async throws {
        try await withAPNs { fake, provider, _ in
            let f = await failure { () async throws(DeliveryFailure) in try await provider.send(androidDelivery(token: deviceToken(6))) }
            guard case .configuration(let message)? = f else {
                Issue.record("got \(String(describing: f))")
                return
            }
            #expect(message.contains("fcm"))
            #expect(fake.records.isEmpty)
        }
    }

    @Test func tokensThatCannotBeAPNsTokensAreTheCallersMistake() async throws {
        try await withAPNs { fake, provider, _ in
            // An FCM registration token, a 36-character hex string (a UUID without dashes' length) and hex with a stray letter.
            let cases: [(token: String, says: String)] = [
                (fcmToken(1), "FCM registration token"),
                (String(repeating: "ab", count: 18), "36 hex digits"),
                (String(repeating: "a", count: 63) + "z", "not all of them hex digits"),
            ]
            for c in cases {
                let f = await failure { () async throws(DeliveryFailure) in try await provider.send(iosDelivery(token: c.token)) }
                guard case .invalidTarget(let reason, let message)? = f else {
                    Issue.record("\(c.token): got \(String(describing: f))")
                    continue
                }
                #expect(reason == "MalformedToken")
                #expect(message.contains(c.says), "\(message)")
                #expect(message.contains("64 to 200 hex digits"))
                #expect(!message.contains(c.token), "the message shows the token shortened only")
            }
            #expect(fake.records.isEmpty, "nothing reaches APNs")
        }
    }

    @Test func liveActivitiesGoToTheActivityTokenAndTopic() async throws {
        try await withAPNs { fake, provider, _ in
            let activity = deviceToken(0xbeef)
            let n = HANotification(
                message: "Washer",
                title: "Laundry",
                data: ["tag": "washer", "live_update": true],
                pushToken: deviceToken(7),
                registrationInfo: .init(appID: bundleID),
                liveActivityToken: activity
            )
            let translated = IOSTranslation.translate(n, now: Date())
            _ = try await provider.send(Delivery(platform: .ios, pushToken: deviceToken(7), appID: bundleID, notification: translated))
            let r = try #require(fake.records.first)
            #expect(r.path == "/3/device/\(activity)")
            #expect(r.headers["apns-topic"] == "\(bundleID).push-type.liveactivity")
            #expect(r.headers["apns-push-type"] == "liveactivity")
            #expect(r.status == 200)
        }
    }

    @Test func deadTokensAreInvalidToken() async throws {
        try await withAPNs { fake, provider, _ in
            let since = Date(timeIntervalSince1970: 1_790_000_000)
            let cases: [(FakeAPNsOutcome, String)] = [
                (.unregistered(since: since), "Unregistered"),
                (.expiredToken, "ExpiredToken"),
                (.badDeviceToken, "BadDeviceToken"),
                (.reject(status: 400, reason: "DeviceTokenNotForTopic"), "DeviceTokenNotForTopic"),
                (.reject(status: 400, reason: "TopicDisallowed"), "TopicDisallowed"),
            ]
            for (i, (outcome, expected)) in cases.enumerated() {
                let token = deviceToken(0x100 + i)
                fake.script(token, [outcome])
                let f = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
                guard case .invalidToken(let reason, let message)? = f else {
                    Issue.record("\(expected): got \(String(describing: f))")
                    continue
                }
                #expect(reason == expected)
                #expect(!message.contains(token))
                if expected == "Unregistered" { #expect(message.contains("2026-09-21")) }
            }
        }
    }

    /// A device's own throttle (`TooManyRequests`) is `throttled`, which says nothing of APNs' health; 5xx are transient.
    @Test func throttlingIsThrottledAndServerErrorsAreTransient() async throws {
        try await withAPNs { fake, provider, _ in
            let token = deviceToken(8)
            fake.script(
                token,
                [
                    .reject(status: 429, reason: "TooManyRequests", retryAfter: 5),
                    .reject(status: 503, reason: "ServiceUnavailable", retryAfter: 2),
                    .reject(status: 500, reason: "InternalServerError"),
                ]
            )
            var got: [(String, Int?)] = []
            for _ in 0..<3 {
                let f = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
                switch f {
                case .throttled(let reason, _, let retryAfter)? where got.isEmpty: got.append((reason, retryAfter))
                case .transient(let reason, _, let retryAfter)? where !got.isEmpty: got.append((reason, retryAfter))
                default:
                    Issue.record("got \(String(describing: f))")
                    return
                }
            }
            #expect(got.map(\.0) == ["TooManyRequests", "ServiceUnavailable", "InternalServerError"])
            #expect(got.map(\.1) == [5, 2, nil])
        }
    }

    @Test func otherAnswersMapToTheirClasses() async throws {
        try await withAPNs { fake, provider, _ in
            let token = deviceToken(9)
            fake.script(
                token,
                [
                    .reject(status: 413, reason: "PayloadTooLarge"),
                    .reject(status: 403, reason: "InvalidProviderToken"),
                    .reject(status: 400, reason: "BadExpirationDate"),
                    .reject(status: 400, reason: "BadTopic"),
                ]
            )
            var got: [DeliveryFailure?] = []
            for _ in 0..<4 { got.append(await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }) }
            guard case .payloadTooLarge? = got[0] else {
                Issue.record("413: \(String(describing: got[0]))")
                return
            }
            guard case .configuration(let m403)? = got[1] else {
                Issue.record("403: \(String(describing: got[1]))")
                return
            }
            #expect(m403.contains("InvalidProviderToken"))
            guard case .invalidPayload(let reason, _)? = got[2] else {
                Issue.record("400: \(String(describing: got[2]))")
                return
            }
            #expect(reason == "BadExpirationDate")
            guard case .configuration(let topic)? = got[3] else {
                Issue.record("BadTopic: \(String(describing: got[3]))")
                return
            }
            #expect(topic.contains("BadTopic"))
            // InvalidProviderToken is not retried: only ExpiredProviderToken is.
            #expect(fake.records.count == 4)
        }
    }

    @Test func droppedConnectionsAreTransient() async throws {
        try await withAPNs { fake, provider, _ in
            let token = deviceToken(10)
            fake.script(token, [.dropConnection])
            let dropped = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            guard case .transient? = dropped else {
                Issue.record("got \(String(describing: dropped))")
                return
            }
            try await sendRecovering { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            #expect(fake.acceptedConnections == 2)
        }
    }

    @Test func slowAnswersTimeOut() async throws {
        try await withAPNs(extraOptions: ["request_timeout_ms": 500]) { fake, provider, _ in
            let token = deviceToken(12)
            fake.script(token, [.delayed(milliseconds: 1500, .success)])
            let slow = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: token)) }
            guard case .transient(let reason, _, _)? = slow else {
                Issue.record("got \(String(describing: slow))")
                return
            }
            #expect(reason == "Timeout")
        }
    }

    @Test func certificateAuthenticationUsesTheClientCertificate() async throws {
        let clientCA = try TestCertificateAuthority(commonName: "Apple Worldwide Developer Relations (test)")
        let identity = try clientCA.issueClientCertificate()
        let dir = try TestFiles.temporaryDirectory()
        try TestFiles.write(identity.certificatePEM, to: dir + "/cert.pem")
        try TestFiles.write(identity.privateKeyPEM, to: dir + "/key.pem")
        let fake = FakeAPNs(authority: Shared.authority, authentication: .certificate(clientCA: clientCA), bundleID: bundleID)
        try await fake.start()
        let provider = try APNsProvider(
            name: "apns-cert",
            options: [
                "cert_file": "cert.pem", "cert_key_file": "key.pem", "topic": .string(bundleID),
                "endpoint": .string(fake.endpoint), "ca_file": .string(Shared.caFile),
            ],
            baseDirectory: dir,
            logger: quietLogger
        )
        let f = await failure { () async throws(DeliveryFailure) in try await provider.send(apnsDelivery(token: deviceToken(11))) }
        await provider.shutdown()
        await fake.shutdown()
        #expect(f == nil, "\(String(describing: f))")
        #expect(fake.records.first?.headers["authorization"] == nil)
        #expect(fake.records.first?.status == 200)
    }
}
