import Foundation
import Logging
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

/// Shared credentials: a CA, an APNs key and an RSA service account are generated once per test process
/// (RSA generation is the slow part).
enum Shared {
    static let authority = try! TestCertificateAuthority()
    static let apnsKey = TestAPNsKey()
    static let account = try! TestServiceAccount(projectID: "pushrelay-test")
    static let directory: String = {
        let dir = try! TestFiles.temporaryDirectory(prefix: "pushrelay-provider-tests")
        try! TestFiles.write(authority.certificatePEM, to: dir + "/ca.pem")
        try! apnsKey.write(to: dir)
        return dir
    }()
    static var caFile: String { directory + "/ca.pem" }
    static var apnsKeyFile: String { directory + "/AuthKey_\(apnsKey.keyID).p8" }
}

let bundleID = "io.robbie.HomeAssistant"
/// A 64-hex-digit APNs device token.
func deviceToken(_ n: Int) -> String {
    let hex = String(n, radix: 16)
    return String(repeating: "a", count: 64 - hex.count) + hex
}
/// An FCM-looking registration token.
func fcmToken(_ n: Int) -> String { "fcmtoken\(n):APA91b" + String(repeating: "x", count: 40) }

/// A fake FCM and an FCM provider pointed at it, both on `clock` (by default a wall time the test moves, with timers
/// in real time: the provider's request timeouts, pings and idle connections); torn down after `body`.
func withFCM(
    clock: ManualClock = ManualClock(timers: .real),
    lifetime: Int = 3599,
    extraOptions: [String: JSONValue] = [:],
    offerHTTP2: Bool = true,
    _ body: (FakeFCM, FCMProvider, ManualClock) async throws -> Void
) async throws {
    let fake = FakeFCM(authority: Shared.authority, account: Shared.account, clock: clock, accessTokenLifetime: lifetime)
    try await fake.start(offerHTTP2: offerHTTP2)
    var options: [String: JSONValue] = [
        "service_account_json": .string(fake.serviceAccountJSON),
        "endpoint": .string(fake.endpoint),
        "ca_file": .string(Shared.caFile),
        "request_timeout_ms": 15000,
    ]
    for (k, v) in extraOptions { options[k] = v }
    try await withProvider(shutdownFake: fake.shutdown) {
        try FCMProvider(name: "fcm-test", options: options, baseDirectory: nil, clock: clock, logger: quietLogger)
    } body: { provider in
        try await body(fake, provider, clock)
    }
}

/// A fake APNs and an APNs provider pointed at it. `fakeClock` defaults to the provider's clock (by default a wall time
/// the test moves, with timers in real time).
func withAPNs(
    clock: ManualClock = ManualClock(timers: .real),
    fakeClock: ManualClock? = nil,
    extraOptions: [String: JSONValue] = [:],
    _ body: (FakeAPNs, APNsProvider, ManualClock) async throws -> Void
) async throws {
    let fake = FakeAPNs(authority: Shared.authority, key: Shared.apnsKey, bundleID: bundleID, clock: fakeClock ?? clock)
    try await fake.start()
    var options: [String: JSONValue] = [
        "key_file": .string(Shared.apnsKeyFile),
        "key_id": .string(Shared.apnsKey.keyID),
        "team_id": .string(Shared.apnsKey.teamID),
        "topic": .string(bundleID),
        "endpoint": .string(fake.endpoint),
        "ca_file": .string(Shared.caFile),
        "request_timeout_ms": 15000,
    ]
    for (k, v) in extraOptions { options[k] = v }
    try await withProvider(shutdownFake: fake.shutdown) {
        try APNsProvider(name: "apns-test", options: options, baseDirectory: nil, clock: clock, logger: quietLogger)
    } body: { provider in
        try await body(fake, provider, clock)
    }
}

/// Builds a provider against a started fake, runs `body`, and shuts both down on every path (a provider's HTTP
/// client must be shut down before it is released).
private func withProvider<Provider: PushProvider>(
    shutdownFake: () async -> Void,
    make: () throws -> Provider,
    body: (Provider) async throws -> Void
) async throws {
    let provider: Provider
    do {
        provider = try make()
    } catch {
        await shutdownFake()
        throw error
    }
    do {
        try await body(provider)
    } catch {
        await provider.shutdown()
        await shutdownFake()
        throw error
    }
    await provider.shutdown()
    await shutdownFake()
}

/// An Android delivery as the core translation builds it.
func androidDelivery(token: String, message: String = "Hello", data: [String: JSONValue] = [:]) -> Delivery {
    let n = HANotification(
        message: message,
        title: "Title",
        data: data,
        pushToken: token,
        registrationInfo: .init(appID: "io.homeassistant.companion.android")
    )
    return Delivery(platform: .android, pushToken: token, appID: "io.homeassistant.companion.android", notification: AndroidTranslation.translate(n))
}

/// An iOS delivery as the core translation builds it.
func iosDelivery(token: String, message: String = "Hello", title: String? = "Title", data: [String: JSONValue] = [:]) -> Delivery {
    let n = HANotification(message: message, title: title, data: data, pushToken: token, registrationInfo: .init(appID: "io.robbie.HomeAssistant"))
    return Delivery(platform: .ios, pushToken: token, appID: "io.robbie.HomeAssistant", notification: IOSTranslation.translate(n, now: Date()))
}

/// A direct APNs delivery with hand-written headers and payload.
func apnsDelivery(
    token: String,
    headers: [String: String] = ["apns-push-type": "alert", "apns-priority": "10"],
    payload: JSONValue = ["aps": ["alert": ["title": "T", "body": "B"]]]
) -> Delivery {
    Delivery(
        platform: .ios,
        pushToken: token,
        appID: "io.robbie.HomeAssistant",
        notification: TranslatedNotification(fcmMessage: ["token": .string(token)], apns: APNsRequest(headers: headers, payload: payload))
    )
}

/// Runs `body` and returns the typed failure it threw (nil when it succeeded).
func failure(_ body: () async throws(DeliveryFailure) -> DeliveryReceipt) async -> DeliveryFailure? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Provider logs are not interesting in test output.
let quietLogger = Logger(label: "pushrelay.test", factory: { _ in SwiftLogNoOpLogHandler() })

/// After a dropped connection, a request racing the pool's notice of the close may fail once (transiently);
/// the one after it must go through on a new connection.
func sendRecovering(_ body: () async throws(DeliveryFailure) -> DeliveryReceipt) async throws {
    for attempt in 1...2 {
        do {
            _ = try await body()
            return
        } catch {
            guard case .transient(let reason, _, _) = error, ["ConnectionError", "ConnectionLost"].contains(reason), attempt == 1 else {
                throw error
            }
        }
    }
}

/// The HTTP version a strict fake speaks, for tests that must hold over both.
enum UpstreamHTTPVersion: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case http2
    case http1

    var testDescription: String { rawValue }
}
