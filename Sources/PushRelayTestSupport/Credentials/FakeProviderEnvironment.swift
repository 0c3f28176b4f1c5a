import Foundation
import PushRelayCore
import PushRelayEventLoopClock

/// Both fakes running on loopback with freshly generated credentials written to a directory: what
/// `pushrelay dev fake-providers`, the end-to-end tests and the benchmark start from.
///
/// Files written to `directory`: `ca.pem` (trust it via `ca_file`), `AuthKey_<keyID>.p8`, `service-account.json`
/// (its `token_uri` points at the fake FCM).
public final class FakeProviderEnvironment: Sendable {
    public let authority: TestCertificateAuthority
    public let apnsKey: TestAPNsKey
    public let serviceAccount: TestServiceAccount
    public let apns: FakeAPNs
    public let fcm: FakeFCM
    public let directory: String
    public let caFile: String
    public let apnsKeyFile: String
    public let serviceAccountFile: String
    public let bundleID: String

    /// Generates credentials, starts both fakes (port 0 picks free ports) and writes the files. `fcmOffersHTTP2: false`
    /// makes the fake FCM speak only HTTP/1.1 over TLS.
    public static func start(
        directory: String,
        bundleID: String = "io.robbie.HomeAssistant",
        apnsPort: Int = 0,
        fcmPort: Int = 0,
        fcmOffersHTTP2: Bool = true,
        clock: any TimePort = EventLoopClock()
    ) async throws -> FakeProviderEnvironment {
        let authority = try TestCertificateAuthority()
        let key = TestAPNsKey()
        let account = try TestServiceAccount()
        let apns = FakeAPNs(authority: authority, key: key, bundleID: bundleID, clock: clock)
        let fcm = FakeFCM(authority: authority, account: account, clock: clock)
        do {
            try await apns.start(port: apnsPort)
            try await fcm.start(port: fcmPort, offerHTTP2: fcmOffersHTTP2)
            return try FakeProviderEnvironment(
                authority: authority,
                key: key,
                account: account,
                apns: apns,
                fcm: fcm,
                directory: directory,
                bundleID: bundleID
            )
        } catch {
            await apns.shutdown()
            await fcm.shutdown()
            throw error
        }
    }

    private init(
        authority: TestCertificateAuthority,
        key: TestAPNsKey,
        account: TestServiceAccount,
        apns: FakeAPNs,
        fcm: FakeFCM,
        directory: String,
        bundleID: String
    ) throws {
        self.authority = authority
        self.apnsKey = key
        self.serviceAccount = account
        self.apns = apns
        self.fcm = fcm
        self.directory = directory
        self.bundleID = bundleID
        caFile = directory + "/ca.pem"
        try TestFiles.write(authority.certificatePEM, to: caFile)
        apnsKeyFile = try key.write(to: directory)
        serviceAccountFile = try account.write(to: directory, tokenURI: fcm.tokenURI)
    }

    /// Options for a `type: fcm` provider talking to the fake FCM.
    public var fcmOptions: [String: JSONValue] {
        ["service_account_file": .string(serviceAccountFile), "endpoint": .string(fcm.endpoint), "ca_file": .string(caFile)]
    }

    /// Options for a `type: apns` provider talking to the fake APNs (token auth).
    public var apnsOptions: [String: JSONValue] {
        [
            "key_file": .string(apnsKeyFile), "key_id": .string(apnsKey.keyID), "team_id": .string(apnsKey.teamID),
            "topic": .string(bundleID), "endpoint": .string(apns.endpoint), "ca_file": .string(caFile),
        ]
    }

    /// `fcmOptions` as the YAML lines of a provider entry (four spaces in: under `providers.<name>:`).
    public var fcmYAML: String { Self.yamlLines(fcmOptions) }

    /// `apnsOptions` as the YAML lines of a provider entry (four spaces in: under `providers.<name>:`).
    public var apnsYAML: String { Self.yamlLines(apnsOptions) }

    /// One `key: value` line per option, sorted by key, each value as JSON (which YAML reads as is).
    static func yamlLines(_ options: [String: JSONValue]) -> String {
        options.keys.sorted().map { "    \($0): \(options[$0]!.jsonString())" }.joined(separator: "\n")
    }

    public func shutdown() async {
        await apns.shutdown()
        await fcm.shutdown()
    }
}
