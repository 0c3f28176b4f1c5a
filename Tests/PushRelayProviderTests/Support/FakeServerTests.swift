import Crypto
import Foundation
import NIOCore
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayTestSupport
import Testing

@testable import PushRelayProviders

/// The fakes refuse what the real services refuse: driven with hand-made requests over real TLS/HTTP/2.
///
/// Wall clock: hand-made requests over real TLS + HTTP/2 connections to the fakes, whose handshakes take real time.
@Suite struct FakeServerTests {
    struct Answer {
        var status: Int
        var json: JSONValue?
    }

    /// A raw client trusting the test CA, run against a started fake.
    static func withClient(_ body: (ProviderHTTPClient) async throws -> Void) async throws {
        var transport = ProviderTransport()
        transport.extraTrustRoots = try ProviderTransport.loadTrustRoots(path: Shared.caFile, key: "ca_file")
        transport.requestTimeout = .seconds(15)
        let client = ProviderHTTPClient(transport: transport, clock: EventLoopClock())
        do { try await body(client) } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
    }

    /// Runs `body`, then `cleanup` (also when `body` throws).
    static func cleaningUp(_ cleanup: () async -> Void, _ body: () async throws -> Void) async throws {
        do { try await body() } catch {
            await cleanup()
            throw error
        }
        await cleanup()
    }

    static func post(_ client: ProviderHTTPClient, _ url: String, headers: [(String, String)], body: String) async throws -> Answer {
        let request = try #require(UpstreamRequest(url: url, headers: headers.map { (name: $0.0, value: $0.1) }, body: ByteBuffer(string: body)))
        let r = try await client.execute(request, timeout: .seconds(15), providerName: "test")
        return Answer(status: r.status, json: r.json)
    }

    // MARK: APNs

    static let apnsSigningKey = try! P256.Signing.PrivateKey(pemRepresentation: Shared.apnsKey.privateKeyPEM)

    static func providerToken(
        kid: String = Shared.apnsKey.keyID,
        iss: String = Shared.apnsKey.teamID,
        iat: JSONValue,
        key: P256.Signing.PrivateKey = apnsSigningKey
    ) throws -> String {
        try CompactJWT.es256(header: ["alg": "ES256", "kid": .string(kid)], claims: ["iss": .string(iss), "iat": iat], key: key)
    }

    func apnsRequest(
        _ client: ProviderHTTPClient,
        _ fake: FakeAPNs,
        path: String? = nil,
        jwt: String?,
        headers: [String: String] = [:],
        payload: String = #"{"aps":{"alert":"hi"}}"#
    ) async throws -> Answer {
        var h: [String: String] = ["apns-topic": bundleID, "apns-push-type": "alert", "apns-priority": "10"]
        for (k, v) in headers { h[k] = v }
        var list = h.map { ($0.key, $0.value) }.filter { !$0.1.isEmpty }
        if let jwt { list.append(("authorization", "bearer \(jwt)")) }
        return try await Self.post(client, fake.endpoint + (path ?? "/3/device/\(deviceToken(1))"), headers: list, body: payload)
    }

    @Test func fakeAPNsChecksTheProviderToken() async throws {
        let clock = ManualClock()
        let fake = FakeAPNs(authority: Shared.authority, key: Shared.apnsKey, bundleID: bundleID, clock: clock)
        try await fake.start()
        try await Self.cleaningUp({ await fake.shutdown() }) {
            try await Self.withClient { client in
                let now = JSONValue.int(Int64(clock.now().timeIntervalSince1970))
                func reason(_ a: Answer) -> String? { a.json?["reason"]?.stringValue }

                #expect(try await apnsRequest(client, fake, jwt: Self.providerToken(iat: now)).status == 200)
                let missing = try await apnsRequest(client, fake, jwt: nil)
                #expect(missing.status == 403 && reason(missing) == "MissingProviderToken")
                let otherKey = try await apnsRequest(client, fake, jwt: Self.providerToken(iat: now, key: P256.Signing.PrivateKey()))
                #expect(otherKey.status == 403 && reason(otherKey) == "InvalidProviderToken")
                #expect(reason(try await apnsRequest(client, fake, jwt: Self.providerToken(kid: "OTHERKEY00", iat: now))) == "InvalidProviderToken")
                #expect(reason(try await apnsRequest(client, fake, jwt: Self.providerToken(iss: "OTHERTEAM0", iat: now))) == "InvalidProviderToken")
                #expect(
                    reason(try await apnsRequest(client, fake, jwt: Self.providerToken(iat: .double(clock.now().timeIntervalSince1970 + 0.5))))
                        == "InvalidProviderToken"
                )
                #expect(reason(try await apnsRequest(client, fake, jwt: "not.a.jwt")) == "InvalidProviderToken")
                let old = try await apnsRequest(client, fake, jwt: Self.providerToken(iat: .int(Int64(clock.now().timeIntervalSince1970) - 3601)))
                #expect(old.status == 403 && reason(old) == "ExpiredProviderToken")
            }
        }
    }

    @Test func fakeAPNsLimitsProviderTokenChangesPerConnection() async throws {
        let clock = ManualClock()
        let fake = FakeAPNs(authority: Shared.authority, key: Shared.apnsKey, bundleID: bundleID, clock: clock)
        try await fake.start()
        try await Self.cleaningUp({ await fake.shutdown() }) {
            try await Self.withClient { client in
                let t0 = Int64(clock.now().timeIntervalSince1970)
                #expect(try await apnsRequest(client, fake, jwt: Self.providerToken(iat: .int(t0))).status == 200)
                #expect(try await apnsRequest(client, fake, jwt: Self.providerToken(iat: .int(t0 - 1))).status == 200)  // first change
                let second = try await apnsRequest(client, fake, jwt: Self.providerToken(iat: .int(t0 - 2)))  // second change within 20 min
                #expect(second.status == 429)
                #expect(second.json?["reason"] == "TooManyProviderTokenUpdates")
                clock.advance(by: 21 * 60)
                #expect(try await apnsRequest(client, fake, jwt: Self.providerToken(iat: .int(t0 + 1260))).status == 200)
                #expect(fake.acceptedConnections == 1)
            }
        }
    }

    @Test func fakeAPNsChecksPathHeadersAndPayload() async throws {
        let clock = ManualClock()
        let fake = FakeAPNs(authority: Shared.authority, key: Shared.apnsKey, bundleID: bundleID, clock: clock)
        try await fake.start()
        try await Self.cleaningUp({ await fake.shutdown() }) {
            try await Self.withClient { client in
                let jwt = try Self.providerToken(iat: .int(Int64(clock.now().timeIntervalSince1970)))
                func reason(
                    path: String? = nil,
                    _ headers: [String: String] = [:],
                    payload: String = #"{"aps":{"alert":"hi"}}"#
                ) async throws -> String {
                    let a = try await apnsRequest(client, fake, path: path, jwt: jwt, headers: headers, payload: payload)
                    return a.json?["reason"]?.stringValue ?? "\(a.status)"
                }
                #expect(try await reason(path: "/3/devices/abc") == "BadPath")
                #expect(try await reason(path: "/3/device/XYZ") == "BadDeviceToken")
                #expect(try await reason(path: "/3/device/" + String(repeating: "A", count: 64)) == "BadDeviceToken")
                #expect(try await reason(["apns-topic": ""]) == "MissingTopic")
                #expect(try await reason(["apns-topic": "com.other.app"]) == "TopicDisallowed")
                #expect(try await reason(["apns-push-type": "voip"]) == "BadTopic")
                #expect(try await reason(["apns-push-type": ""]) == "InvalidPushType")
                #expect(try await reason(["apns-priority": "7"]) == "BadPriority")
                #expect(try await reason(["apns-id": "NOT-A-UUID"]) == "BadMessageId")
                #expect(try await reason(["apns-id": UUID().uuidString]) == "BadMessageId")  // upper case
                #expect(try await reason(["apns-expiration": "tomorrow"]) == "BadExpirationDate")
                #expect(try await reason(["apns-collapse-id": String(repeating: "c", count: 65)]) == "BadCollapseId")
                #expect(try await reason(payload: "") == "PayloadEmpty")
                #expect(try await reason(payload: #"{"aps":{"alert":"\#(String(repeating: "x", count: 4100))"}}"#) == "PayloadTooLarge")
                #expect(
                    try await reason(["apns-push-type": "background", "apns-priority": "10"], payload: #"{"aps":{"content-available":1}}"#)
                        == "BadPriority"
                )
                #expect(
                    try await reason(
                        ["apns-push-type": "background", "apns-priority": "5"],
                        payload: #"{"aps":{"content-available":1,"alert":"x"}}"#
                    ) == "InvalidPushType"
                )
                #expect(
                    try await reason(["apns-push-type": "background", "apns-priority": "5"], payload: #"{"aps":{"content-available":1},"x":1}"#)
                        == "200"
                )
                #expect(fake.records.count == 17)
            }
        }
    }

    // MARK: FCM

    static let rsaKey = try! ServiceAccount.parse(Shared.account.json(tokenURI: "https://x.invalid/token"), key: "k").privateKey

    func assertion(
        _ fake: FakeFCM,
        clock: ManualClock,
        iat: JSONValue? = nil,
        lifetime: Int64 = 3600,
        aud: String? = nil,
        scope: String = GoogleOAuthAssertion.scope
    ) throws -> String {
        let now = Int64(clock.now().timeIntervalSince1970)
        return try CompactJWT.rs256(
            header: ["alg": "RS256", "typ": "JWT"],
            claims: [
                "iss": .string(Shared.account.clientEmail), "scope": .string(scope), "aud": .string(aud ?? fake.tokenURI), "iat": iat ?? .int(now),
                "exp": .int(now + lifetime),
            ],
            key: Self.rsaKey
        )
    }

    @Test func fakeFCMChecksTheOAuthAssertion() async throws {
        let clock = ManualClock()
        let fake = FakeFCM(authority: Shared.authority, account: Shared.account, clock: clock, accessTokenLifetime: 600)
        try await fake.start()
        try await Self.cleaningUp({ await fake.shutdown() }) {
            try await Self.withClient { client in
                func token(_ jwt: String) async throws -> Answer {
                    try await Self.post(
                        client,
                        fake.tokenURI,
                        headers: [("content-type", "application/x-www-form-urlencoded")],
                        body: GoogleOAuthAssertion.formBody(assertion: jwt)
                    )
                }
                let ok = try await token(assertion(fake, clock: clock))
                #expect(ok.status == 200)
                #expect(ok.json?["expires_in"] == 600)
                let accessToken = try #require(ok.json?["access_token"]?.stringValue)

                #expect(
                    try await token(assertion(fake, clock: clock, iat: .double(clock.now().timeIntervalSince1970 + 0.25))).json?["error"]
                        == "invalid_grant"
                )
                #expect(try await token(assertion(fake, clock: clock, lifetime: 3601)).json?["error"] == "invalid_grant")
                #expect(try await token(assertion(fake, clock: clock, aud: "https://oauth2.googleapis.com/token")).json?["error"] == "invalid_grant")
                #expect(
                    try await token(assertion(fake, clock: clock, scope: "https://www.googleapis.com/auth/userinfo.email")).json?["error"]
                        == "invalid_scope"
                )
                #expect(fake.tokenRequests == 5)

                // The issued token works until it expires on the fake's clock.
                let send = { (bearer: String?) async throws -> Answer in
                    var headers = [("content-type", "application/json")]
                    if let bearer { headers.append(("authorization", "Bearer \(bearer)")) }
                    return try await Self.post(
                        client,
                        fake.endpoint + "/v1/projects/pushrelay-test/messages:send",
                        headers: headers,
                        body: #"{"message":{"token":"t1","data":{"a":"b"}}}"#
                    )
                }
                #expect(try await send(accessToken).status == 200)
                #expect(try await send(nil).json?["error"]?["status"] == "UNAUTHENTICATED")
                #expect(try await send("ya29.forged").status == 401)
                clock.advance(by: 601)
                #expect(try await send(accessToken).status == 401)
            }
        }
    }

    @Test func fakeFCMChecksTheMessage() async throws {
        let clock = ManualClock()
        let fake = FakeFCM(authority: Shared.authority, account: Shared.account, clock: clock)
        try await fake.start()
        try await Self.cleaningUp({ await fake.shutdown() }) {
            try await Self.withClient { client in
                let grant = try await Self.post(
                    client,
                    fake.tokenURI,
                    headers: [("content-type", "application/x-www-form-urlencoded")],
                    body: GoogleOAuthAssertion.formBody(assertion: assertion(fake, clock: clock))
                )
                let bearer = try #require(grant.json?["access_token"]?.stringValue)
                func send(_ message: String, project: String = "pushrelay-test") async throws -> Answer {
                    try await Self.post(
                        client,
                        fake.endpoint + "/v1/projects/\(project)/messages:send",
                        headers: [("content-type", "application/json"), ("authorization", "Bearer \(bearer)")],
                        body: #"{"message":\#(message)}"#
                    )
                }
                let ok = try await send(#"{"token":"t1","data":{"a":"b"}}"#)
                #expect(ok.json?["name"]?.stringValue?.hasPrefix("projects/pushrelay-test/messages/") == true)

                let notString = try await send(#"{"token":"t1","data":{"a":"b","n":5}}"#)
                #expect(notString.status == 400)
                #expect(notString.json?["error"]?["status"] == "INVALID_ARGUMENT")
                let details = notString.json?["error"]?["details"]?.arrayValue ?? []
                #expect(details.contains { $0["fieldViolations"]?.arrayValue?.first?["field"] == "message.data[1].value" })
                #expect(details.contains { $0["errorCode"] == "INVALID_ARGUMENT" })

                #expect(try await send(#"{"data":{"a":"b"}}"#).status == 400)  // no target
                #expect(try await send(#"{"token":"t","topic":"x"}"#).status == 400)
                #expect(try await send(#"{"token":"t","data":{"from":"x"}}"#).status == 400)
                #expect(try await send(#"{"token":"t","android":{"ttl":"86400"}}"#).status == 400)
                #expect(try await send(#"{"token":"t","android":{"ttl":"2419201s"}}"#).status == 400)
                #expect(try await send(#"{"token":"t","android":{"ttl":"0s","priority":"HIGH"}}"#).status == 200)
                #expect(try await send(#"{"token":"t","android":{"priority":"urgent"}}"#).status == 400)
                #expect(try await send(#"{"token":"t","apns":{"headers":{"apns-priority":10}}}"#).status == 400)
                let big = try await send(#"{"token":"t","data":{"a":"\#(String(repeating: "x", count: 4100))"}}"#)
                #expect(big.json?["error"]?["message"] == "Message is too big")
                #expect(try await send(#"{"token":"t"}"#, project: "someone-else").status == 403)
                #expect(fake.records.count == 12)
            }
        }
    }
}
