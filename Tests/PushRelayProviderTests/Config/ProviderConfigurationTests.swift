import Foundation
import PushRelayCore
import PushRelayProviders
import PushRelayTestSupport
import Testing

@Suite struct ProviderConfigurationTests {
    static let accountJSON = Shared.account.json(tokenURI: "https://oauth2.googleapis.com/token")

    func fcmError(_ options: [String: JSONValue], base: String? = nil) -> ProviderConfigError? {
        do {
            _ = try FCMProvider.Configuration(options: options, baseDirectory: base)
            return nil
        } catch {
            return error
        }
    }

    func apnsError(_ options: [String: JSONValue], base: String? = nil) -> ProviderConfigError? {
        do {
            _ = try APNsProvider.Configuration(options: options, baseDirectory: base)
            return nil
        } catch {
            return error
        }
    }

    @Test func fcmDefaultsComeFromTheServiceAccount() throws {
        let dir = try TestFiles.temporaryDirectory()
        try TestFiles.write(Self.accountJSON, to: dir + "/firebase.json")
        let c = try FCMProvider.Configuration(options: ["service_account_file": "firebase.json"], baseDirectory: dir)
        #expect(c.projectID == "pushrelay-test")
        #expect(c.endpoint == "https://fcm.googleapis.com")
        #expect(c.sendURL == "https://fcm.googleapis.com/v1/projects/pushrelay-test/messages:send")
        #expect(c.serviceAccount.clientEmail == Shared.account.clientEmail)
        #expect(c.serviceAccount.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(c.maxConnections == 8)

        let o = try FCMProvider.Configuration(
            options: [
                "service_account_json": .string(Self.accountJSON), "project_id": "other-project", "endpoint": "https://127.0.0.1:9443/",
                "max_connections": "16", "request_timeout_ms": 2500,
            ],
            baseDirectory: nil
        )
        #expect(o.projectID == "other-project")
        #expect(o.endpoint == "https://127.0.0.1:9443")
        #expect(o.maxConnections == 16)
        #expect(o.requestTimeoutMilliseconds == 2500)
    }

    @Test func fcmOptionErrorsNameTheKey() throws {
        let json = JSONValue.string(Self.accountJSON)
        #expect(fcmError([:])?.key == "service_account_file")
        #expect(fcmError(["service_account_file": "a.json", "service_account_json": json])?.key == "service_account_json")
        #expect(fcmError(["service_account_file": "/nonexistent/firebase.json"])?.key == "service_account_file")
        #expect(fcmError(["service_account_json": "{}"])?.problem.contains("client_email") == true)
        #expect(fcmError(["service_account_json": "not json"])?.key == "service_account_json")
        #expect(fcmError(["service_account_json": json, "servce_account": "x"])?.key == "servce_account")
        #expect(fcmError(["service_account_json": json, "endpoint": "ftp://x"])?.key == "endpoint")
        #expect(fcmError(["service_account_json": json, "endpoint": "https://fcm.googleapis.com/v1"])?.key == "endpoint")
        #expect(fcmError(["service_account_json": json, "max_connections": 0])?.key == "max_connections")
        #expect(fcmError(["service_account_json": json, "ca_file": "/nonexistent.pem"])?.key == "ca_file")
        #expect(fcmError(["service_account_json": json, "project_id": "a/b"])?.key == "project_id")

        var noProject = try #require(JSONParser.parse(Self.accountJSON).objectValue)
        noProject["project_id"] = nil
        #expect(fcmError(["service_account_json": .string(JSONValue.object(noProject).jsonString())])?.key == "project_id")
        var badKey = noProject
        badKey["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        let keyError = fcmError(["service_account_json": .string(JSONValue.object(badKey).jsonString()), "project_id": "p"])
        #expect(keyError?.problem.contains("private_key") == true)
        #expect(keyError?.problem.contains("AAAA") == false, "errors never echo key material")
    }

    @Test func apnsTokenAuthentication() throws {
        let c = try APNsProvider.Configuration(
            options: [
                "key_file": .string(Shared.apnsKeyFile), "key_id": .string(Shared.apnsKey.keyID), "team_id": .string(Shared.apnsKey.teamID),
                "topic": .string(bundleID), "environment": "sandbox",
            ],
            baseDirectory: nil
        )
        #expect(c.endpoint == "https://api.sandbox.push.apple.com")
        #expect(c.environment == .sandbox)
        guard case .token(let keyID, let teamID, _) = c.authentication else {
            Issue.record("expected token auth")
            return
        }
        #expect(keyID == Shared.apnsKey.keyID)
        #expect(teamID == Shared.apnsKey.teamID)

        let relative = try APNsProvider.Configuration(
            options: [
                "key_file": .string("AuthKey_\(Shared.apnsKey.keyID).p8"), "key_id": "K", "team_id": "T", "topic": .string(bundleID),
            ],
            baseDirectory: Shared.directory
        )
        #expect(relative.endpoint == "https://api.push.apple.com")
    }

    @Test func apnsOptionErrorsNameTheKey() throws {
        let token: [String: JSONValue] = [
            "key_file": .string(Shared.apnsKeyFile), "key_id": "KEY1234567", "team_id": "TEAM123456", "topic": .string(bundleID),
        ]
        func with(_ changes: [String: JSONValue?]) -> [String: JSONValue] {
            var o = token
            for (k, v) in changes { o[k] = v }
            return o
        }
        #expect(apnsError(["topic": .string(bundleID)])?.key == "key_file")
        #expect(apnsError(with(["cert_file": "c.pem"]))?.key == "cert_file")
        #expect(apnsError(with(["key_id": nil]))?.key == "key_id")
        #expect(apnsError(with(["team_id": nil]))?.key == "team_id")
        #expect(apnsError(with(["topic": nil]))?.key == "topic")
        #expect(apnsError(with(["environment": "development"]))?.key == "environment")
        #expect(apnsError(with(["key_file": .string(Shared.caFile)]))?.key == "key_file")
        #expect(apnsError(with(["key_file": "/nonexistent.p8"]))?.key == "key_file")
        #expect(apnsError(with(["endpoint": "api.push.apple.com"]))?.key == "endpoint")
        #expect(apnsError(with(["teamid": "x"]))?.key == "teamid")
        #expect(apnsError(["cert_file": "/nonexistent.pem", "cert_key_file": "/nonexistent.key", "topic": .string(bundleID)])?.key == "cert_file")
        #expect(apnsError(["cert_file": .string(Shared.caFile), "topic": .string(bundleID)])?.key == "cert_key_file")
    }
}
