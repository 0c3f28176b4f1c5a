/// What to do about each FCM or Google OAuth refusal that says the setup or the token is wrong: one line each, used in
/// the answers Home Assistant logs and by `pushrelay doctor`.
enum FCMRemedy {
    static let reinstall =
        "Open the Home Assistant companion app on that device so it registers a new token (and remove the old device from Home Assistant if it is gone)."

    /// The remedy for FCM's `errorCode` (or Google OAuth's `error`), nil for one that is not about the setup.
    static func line(for code: String, projectID: String) -> String? {
        switch code {
        case "UNREGISTERED", "INVALID_ARGUMENT":
            return reinstall
        case "THIRD_PARTY_AUTH_ERROR":
            return
                "Upload the APNs auth key of the team that signs the iOS app in the Firebase console (Project settings → Cloud Messaging → Apple app configuration), for each Apple app."
        case "SENDER_ID_MISMATCH":
            return
                "Route this app to the provider of the Firebase project the app was built with (its google-services.json or GoogleService-Info.plist names the project)."
        case "PERMISSION_DENIED":
            return
                "Check project_id ('\(projectID)') and give the service account the 'Firebase Cloud Messaging API Admin' role (Google Cloud console → IAM)."
        case "invalid_grant":
            return
                "The service account's key was deleted or disabled, or this machine's clock is off by minutes: check the clock (timedatectl), then generate a new key in the Firebase console (Project settings → Service accounts)."
        default:
            return nil
        }
    }
}
