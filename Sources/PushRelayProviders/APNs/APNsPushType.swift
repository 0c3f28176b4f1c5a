import PushRelayCore

/// The `apns-push-type` values that change how PushRelay addresses a request.
enum APNsPushType {
    /// The `apns-topic` for a push type: the bundle id, with the suffix Apple requires for VoIP, complication,
    /// file-provider and Live Activity pushes. The one place the suffixes are applied.
    static func topic(bundleID: String, pushType: String) -> String {
        switch pushType {
        case "voip": return bundleID + ".voip"
        case "complication": return bundleID + ".complication"
        case "fileprovider": return bundleID + ".pushkit.fileprovider"
        case "liveactivity": return bundleID + ".push-type.liveactivity"
        default: return bundleID
        }
    }

    /// APNs payload limit in bytes: 5120 for VoIP, 4096 otherwise.
    static func payloadLimit(pushType: String) -> Int {
        pushType == "voip" ? 5120 : 4096
    }

    /// `apns-collapse-id` limit in bytes.
    static let collapseIDLimit = APNsHeaders.collapseIDLimit
}
