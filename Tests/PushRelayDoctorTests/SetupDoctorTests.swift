import Foundation
import Logging
import PushRelayConfiguration
import PushRelayCore
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayDoctor

/// `pushrelay doctor`'s checks against the strict fakes over real TLS and HTTP/2: a good setup passes every check, and
/// each misconfiguration fails the check it concerns, with its remedy.
@Suite struct SetupDoctorTests {
    /// The doctor's checks of a setup with both fakes; the database is made first, as `serve` would have, unless
    /// `sqlitePath` is given.
    static func run(
        _ env: FakeProviderEnvironment,
        sqlitePath: String? = nil,
        configure: (inout PushRelayConfig) -> Void = { _ in }
    ) async throws -> [SetupCheck] {
        var config = try PushRelayConfig.load(file: nil, environment: [:])
        if let sqlitePath {
            config.storage.sqlitePath = sqlitePath
        } else {
            config.storage.sqlitePath = TestServer.tempPath()
            try await Storage.sqlite(path: config.storage.sqlitePath).engine.flushAndClose()
        }
        config.providers = [
            "fcm": .init(name: "fcm", type: "fcm", options: env.fcmOptions),
            "apns": .init(name: "apns", type: "apns", options: env.apnsOptions),
        ]
        config.apps = [.init(match: "io.robbie.HomeAssistant*", provider: "apns"), .init(match: "*", provider: "fcm")]
        configure(&config)
        return await doctor(config)
    }

    /// The doctor's checks of `config`, its SQLite database opened as the binary opens it for a command that does not
    /// migrate.
    static func doctor(_ config: PushRelayConfig) async -> [SetupCheck] {
        let path = config.storage.sqlitePath
        return await SetupDoctor.run(config, openStorage: { try Storage.sqlite(path: path, schema: .check) }, logger: Logger(label: "test"))
    }

    static func withFakes(_ body: (FakeProviderEnvironment) async throws -> Void) async throws {
        let dir = URL(fileURLWithPath: TestServer.tempPath()).deletingLastPathComponent().path
        let env = try await FakeProviderEnvironment.start(directory: dir)
        do {
            try await body(env)
        } catch {
            await env.shutdown()
            throw error
        }
        await env.shutdown()
    }

    static func failed(_ checks: [SetupCheck], _ check: String) -> SetupCheck? {
        checks.first { $0.check == check && !$0.passed }
    }

    @Test func aGoodSetupPassesEveryCheckAndDeliversNothing() async throws {
        try await Self.withFakes { env in
            let checks = try await Self.run(env)
            let failures = checks.filter { !$0.passed }
            #expect(failures.isEmpty, "\(failures)")
            #expect(Set(checks.map(\.subject)) == ["storage", "providers.fcm", "providers.apns"])
            #expect(checks.contains { $0.check == "OAuth access token" && $0.passed })
            #expect(checks.contains { $0.check == "APNs accepts the credentials" && $0.passed })
            #expect(env.fcm.records.isEmpty, "no FCM message was sent")
        }
    }

    @Test func aRevokedServiceAccountKeyFailsTheOAuthCheck() async throws {
        try await Self.withFakes { env in
            env.fcm.failTokenRequests([.invalidGrant])
            let checks = try await Self.run(env)
            let failure = try #require(Self.failed(checks, "OAuth access token"))
            #expect(failure.detail.contains("invalid_grant"))
            #expect(failure.remedy?.contains("Generate") == true || failure.remedy?.contains("new key") == true)
            #expect(checks.filter { !$0.passed }.count == 1)
        }
    }

    @Test func aProjectIDOfAnotherProjectFails() async throws {
        try await Self.withFakes { env in
            let checks = try await Self.run(env) { c in
                c.providers["fcm"]?.options["project_id"] = "someone-elses-project"
            }
            let failure = try #require(Self.failed(checks, "project id"))
            #expect(failure.detail.contains("someone-elses-project"))
            #expect(failure.remedy?.contains("set project_id to") == true)
        }
    }

    @Test func anAPNsKeyThatIsNotTheTeamsFailsWithItsRemedy() async throws {
        try await Self.withFakes { env in
            // The same key id and team, another key: APNs cannot verify the provider token.
            let other = try TestAPNsKey().write(to: env.directory + "/other")
            let checks = try await Self.run(env) { c in c.providers["apns"]?.options["key_file"] = .string(other) }
            let failure = try #require(Self.failed(checks, "APNs accepts the credentials"))
            #expect(failure.detail.contains("InvalidProviderToken"))
            #expect(failure.remedy?.contains("key_id") == true)
        }
    }

    @Test func aTopicOfAnotherAppFailsWithItsRemedy() async throws {
        try await Self.withFakes { env in
            let checks = try await Self.run(env) { c in c.providers["apns"]?.options["topic"] = "com.example.other" }
            let failure = try #require(Self.failed(checks, "APNs accepts the credentials"))
            #expect(failure.remedy?.contains("com.example.other") == true, "\(failure)")
        }
    }

    @Test func anUnwritableDatabaseDirectoryFailsTheStorageCheck() async throws {
        try await Self.withFakes { env in
            let checks = try await Self.run(env, sqlitePath: "/proc/pushrelay-doctor/db.sqlite")
            let failure = try #require(Self.failed(checks, "open"))
            #expect(failure.remedy?.contains("storage.sqlite_path") == true)
            #expect(failure.remedy?.contains("PUSHRELAY_STORAGE_SQLITE_PATH") == true)
        }
    }

    /// The storage check names the database and the schema version it is at.
    @Test func theStorageCheckNamesTheSchemaVersion() async throws {
        var config = try PushRelayConfig.load(file: nil, environment: [:])
        config.storage.sqlitePath = TestServer.tempPath()
        let storage = try Storage.sqlite(path: config.storage.sqlitePath)
        let version = try #require(try await storage.engine.appliedMigrations().map(\.version).max())
        try await storage.engine.flushAndClose()
        let checks = await Self.doctor(config)
        let opened = try #require(checks.first { $0.subject == "storage" })
        #expect(opened.passed, "\(opened)")
        #expect(opened.detail == "SQLite \(config.storage.sqlitePath), schema version \(version)")
    }

    /// Below the free space it asks for, the disk check fails, saying how much it asks for and which key moves the
    /// database.
    @Test func tooLittleFreeDiskFailsWithTheThreshold() throws {
        let path = TestServer.tempPath()
        #expect(SetupDoctor.freeDisk(path: path).passed || SetupDoctor.minimumFreeBytes == 1 << 30)
        let failed = SetupDoctor.freeDisk(path: path, minimum: 1 << 60)
        #expect(!failed.passed)
        #expect(failed.detail.contains("less than the 1073741824.0 GiB this check asks for"), "\(failed)")
        #expect(failed.remedy?.contains("storage.sqlite_path") == true)
        #expect(SetupDoctor.minimumFreeBytes == 1 << 30, "docs/operations.md names 1 GiB")
    }

    static func config(_ env: FakeProviderEnvironment) throws -> PushRelayConfig {
        var config = try PushRelayConfig.load(file: nil, environment: [:])
        config.storage.sqlitePath = TestServer.tempPath()
        config.providers = [
            "fcm": .init(name: "fcm", type: "fcm", options: env.fcmOptions),
            "apns": .init(name: "apns", type: "apns", options: env.apnsOptions),
        ]
        config.apps = [.init(match: "io.robbie.HomeAssistant*", provider: "apns"), .init(match: "*", provider: "fcm")]
        return config
    }

    /// `SetupDoctor.tryToken` against the fakes.
    static func tryToken(
        _ env: FakeProviderEnvironment,
        _ token: String,
        app: String = "io.homeassistant.companion.android",
        send: Bool = false,
        otherEnvironment: String? = nil
    ) async throws -> [SetupCheck] {
        // The other APNs environment is a fake too (by default the same one): nothing leaves the machine.
        let other = otherEnvironment ?? env.apns.endpoint
        return await SetupDoctor.tryToken(token, appID: app, send: send, config: try Self.config(env), logger: Logger(label: "test")) { _ in other }
    }

    @Test func aTokenIsValidatedByFCMWithoutADelivery() async throws {
        try await Self.withFakes { env in
            let checks = try await Self.tryToken(env, "fcm-doctor-token")
            #expect(checks.count == 1 && checks.allSatisfy(\.passed), "\(checks)")
            #expect(env.fcm.records.count == 1)
            #expect(env.fcm.records.allSatisfy { $0.validateOnly && $0.token == "fcm-doctor-token" })
        }
    }

    /// The test notification is translated as Home Assistant's would be: an app id in `ios.companion_app_ids` gets
    /// the iOS translation (an `apns` block FCM checks) even when it routes to FCM; any other app id, Android's.
    @Test func aCompanionAppIDOfTheConfigGetsTheIOSTranslation() async throws {
        try await Self.withFakes { env in
            var config = try Self.config(env)
            config.iosCompanionAppIDs = ["*io.robbie.HomeAssistant*", "org.example.HomeAssistant*"]
            let ios = await SetupDoctor.tryToken(
                "fcm-ios-token",
                appID: "org.example.HomeAssistant.dev",
                send: false,
                config: config,
                logger: Logger(label: "test")
            )
            #expect(ios.count == 1 && ios.allSatisfy(\.passed), "\(ios)")
            let iosMessage = try #require(env.fcm.records.last?.body?["message"])
            #expect(iosMessage["fcm_options"]?["analytics_label"] == "legacyNotification")
            #expect(iosMessage["apns"]?["payload"]?["aps"]?["alert"]?["title"] == "PushRelay")
            #expect(iosMessage["apns"]?["payload"]?["aps"]?["mutable-content"] == 1, "the companion app's translation")

            let android = await SetupDoctor.tryToken(
                "fcm-android-token",
                appID: "io.homeassistant.companion.android",
                send: false,
                config: config,
                logger: Logger(label: "test")
            )
            #expect(android.allSatisfy { $0.passed }, "\(android)")
            let androidMessage = try #require(env.fcm.records.last?.body?["message"])
            #expect(androidMessage["fcm_options"]?["analytics_label"] == "androidV1Notification")
            #expect(env.fcm.records.count == 2 && env.fcm.records.allSatisfy { $0.validateOnly })
        }
    }

    @Test func aDeadFCMTokenFailsWithWhatToDo() async throws {
        try await Self.withFakes { env in
            env.fcm.script("fcm-dead-token", [.unregistered])
            let checks = try await Self.tryToken(env, "fcm-dead-token")
            let failure = try #require(checks.first { !$0.passed })
            #expect(failure.detail.contains("UNREGISTERED"))
            #expect(failure.remedy?.contains("companion app") == true)
        }
    }

    @Test func apnsIsAskedOnlyWithSendAndABadDeviceTokenNamesTheEnvironment() async throws {
        try await Self.withFakes { env in
            let token = String(repeating: "ab", count: 32)
            let dry = try await Self.tryToken(env, token, app: "io.robbie.HomeAssistant")
            #expect(dry.allSatisfy(\.passed) && env.apns.records.isEmpty, "without --send nothing is sent to APNs")
            let sent = try await Self.tryToken(env, token, app: "io.robbie.HomeAssistant", send: true)
            #expect(sent.contains { $0.check == "a notification is delivered" && $0.passed }, "\(sent)")
            #expect(env.apns.records.count == 1)
            env.apns.script(token, [.badDeviceToken])
            let wrongEnvironment = try await Self.tryToken(env, token, app: "io.robbie.HomeAssistant", send: true)
            let failure = try #require(wrongEnvironment.first { !$0.passed })
            #expect(failure.detail.contains("BadDeviceToken"))
            #expect(failure.remedy?.contains("sandbox") == true)
        }
    }

    /// Each FCM refusal of a validated notification fails the token's check with its remedy.
    @Test(arguments: [
        (FakeFCMOutcome.thirdPartyAuthError, "THIRD_PARTY_AUTH_ERROR", "Apple app configuration"),
        (FakeFCMOutcome.senderIDMismatch, "SENDER_ID_MISMATCH", "Firebase project the app was built with"),
    ])
    func anFCMRefusalOfTheTokenSaysWhatToDo(outcome: FakeFCMOutcome, reason: String, remedy: String) async throws {
        try await Self.withFakes { env in
            env.fcm.script("fcm-refused", [outcome])
            let checks = try await Self.tryToken(env, "fcm-refused")
            let failure = try #require(checks.first { !$0.passed })
            #expect(failure.remedy?.contains(reason) == true && failure.remedy?.contains(remedy) == true, "\(failure)")
        }
    }

    /// Each APNs refusal that says the setup is wrong fails the token's check with its remedy.
    @Test(arguments: [
        (403, "InvalidProviderToken", "team_id"),
        (400, "DeviceTokenNotForTopic", "topic"),
        (400, "TopicDisallowed", "bundle id"),
        (403, "BadCertificateEnvironment", "environment"),
        (429, "TooManyProviderTokenUpdates", "own key"),
    ])
    func anAPNsRefusalOfTheTokenSaysWhatToDo(status: Int, reason: String, remedy: String) async throws {
        try await Self.withFakes { env in
            let token = String(repeating: "cd", count: 32)
            // Twice: a refusal PushRelay retries (a renewed provider token, a transient answer) is refused again.
            env.apns.script(token, Array(repeating: .reject(status: status, reason: reason), count: 8))
            let checks = try await Self.tryToken(env, token, app: "io.robbie.HomeAssistant", send: true)
            let failure = try #require(checks.first { !$0.passed })
            #expect(failure.detail.contains(reason) || failure.remedy?.contains(reason) == true, "\(failure)")
            #expect(failure.remedy?.contains(remedy) == true, "\(failure)")
        }
    }

    /// A token APNs calls bad in the configured environment is tried in the other one: the verdict says which
    /// environment it belongs to (the other environment is a second fake here, Apple's host in use).
    @Test func aBadDeviceTokenIsTriedInTheOtherEnvironment() async throws {
        try await Self.withFakes { env in
            let token = String(repeating: "ef", count: 32)
            let sandbox = FakeAPNs(authority: env.authority, key: env.apnsKey, bundleID: env.bundleID)
            try await sandbox.start()
            env.apns.script(token, [.badDeviceToken])
            let checks = try await Self.tryToken(env, token, app: "io.robbie.HomeAssistant", send: true, otherEnvironment: sandbox.endpoint)
            await sandbox.shutdown()
            let verdict = try #require(checks.first { $0.check == "the token's APNs environment" })
            #expect(verdict.detail.contains("belongs to sandbox"), "\(verdict)")
            #expect(verdict.remedy?.contains("environment: sandbox") == true)
            #expect(sandbox.records.count == 1)

            // Refused in both: the token is no device's.
            env.apns.script(token, [.badDeviceToken])
            let sandboxToo = FakeAPNs(authority: env.authority, key: env.apnsKey, bundleID: env.bundleID)
            try await sandboxToo.start()
            sandboxToo.script(token, [.badDeviceToken])
            let neither = try await Self.tryToken(env, token, app: "io.robbie.HomeAssistant", send: true, otherEnvironment: sandboxToo.endpoint)
            await sandboxToo.shutdown()
            let none = try #require(neither.first { $0.check == "the token's APNs environment" })
            #expect(none.remedy?.contains("either environment") == true, "\(none)")
        }
    }
}
