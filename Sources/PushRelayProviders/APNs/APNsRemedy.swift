/// What to do about each APNs refusal that says the setup is wrong: one line each, for `pushrelay doctor` and the
/// answers Home Assistant logs.
enum APNsRemedy {
    /// The remedy for APNs' `reason`, nil for a reason that is not about the setup.
    static func line(for reason: String, topic: String) -> String? {
        switch reason {
        case "BadDeviceToken":
            return
                "The device token is not one APNs issued for this environment: a token from a Debug build belongs to the sandbox (environment: sandbox), one from a TestFlight or App Store build to production."
        case "DeviceTokenNotForTopic":
            return "The device token belongs to another app than '\(topic)': set topic to the bundle id of the app that registered it."
        case "TopicDisallowed", "BadTopic":
            return
                "APNs does not allow pushes to '\(topic)' with this key: set topic to the app's bundle id, and use a key of the team that owns that app (Apple developer account → Certificates, Identifiers & Profiles → Keys)."
        case "InvalidProviderToken", "UnrelatedKeyIdInToken", "MissingProviderToken":
            return
                "The key file, key_id and team_id do not belong together, or the key was revoked: key_id is in the .p8 file's name (AuthKey_<key_id>.p8), team_id under Membership details of the Apple developer account."
        case "ExpiredProviderToken":
            return "APNs found the provider token's time wrong: set this machine's clock right (timedatectl, NTP)."
        case "TooManyProviderTokenUpdates":
            return
                "Several processes sign tokens with the same key and replace each other's: give each PushRelay instance its own key, or let one instance send to APNs."
        case "BadCertificateEnvironment", "BadCertificate", "Forbidden":
            return
                "The client certificate is not valid for this environment or app: create an APNs certificate for '\(topic)' and the right environment, or use a key (key_file, key_id, team_id), which works for both."
        default:
            return nil
        }
    }
}
