import PushRelayCore

extension FCMProvider: SelfChecking {
    /// The service account (parsed when the provider was built), its project against `project_id`, and an OAuth
    /// access token obtained from its `token_uri`. Nothing is sent to a device.
    public func selfCheck() async -> [SetupCheck] {
        let subject = "providers.\(name)"
        let account = configuration.serviceAccount
        var checks = [
            SetupCheck(
                subject: subject,
                check: "service account",
                passed: true,
                detail: "\(account.clientEmail), key \(account.privateKeyID ?? "(no private_key_id)")"
            )
        ]
        if let keyProject = account.projectID, keyProject != configuration.projectID {
            checks.append(
                SetupCheck(
                    subject: subject,
                    check: "project id",
                    passed: false,
                    detail: "project_id is '\(configuration.projectID)' but the service account belongs to '\(keyProject)'",
                    remedy:
                        "Use the service-account key of the Firebase project your apps are registered in (Firebase console → Project settings → Service accounts → Generate new private key), or set project_id to '\(keyProject)'."
                )
            )
        } else {
            checks.append(SetupCheck(subject: subject, check: "project id", passed: true, detail: configuration.projectID))
        }
        do {
            _ = try await tokenSource.accessToken()
            checks.append(SetupCheck(subject: subject, check: "OAuth access token", passed: true, detail: "issued by \(account.tokenURI)"))
        } catch {
            checks.append(
                SetupCheck(
                    subject: subject,
                    check: "OAuth access token",
                    passed: false,
                    detail: error.message,
                    remedy: Self.oauthRemedy(error.message, tokenURI: account.tokenURI)
                )
            )
        }
        return checks
    }

    /// What to do when Google's token endpoint refused the service account.
    static func oauthRemedy(_ message: String, tokenURI: String) -> String {
        if message.contains("invalid_grant"), let line = FCMRemedy.line(for: "invalid_grant", projectID: "") { return line }
        return
            "PushRelay could not get an access token from Google: check that this machine reaches \(tokenURI) (DNS, firewall, proxy) and that the service-account file is the one Firebase generated."
    }
}
