/// What an APNs device token looks like: 64 to 200 hex digits (32 bytes today; Apple reserves the right to grow it).
public enum APNsDeviceToken {
    public static let lengths = 64...200

    public static func isWellFormed(_ token: String) -> Bool {
        lengths.contains(token.count) && token.allSatisfy { $0.isASCII && $0.isHexDigit }
    }

    /// Why `token` cannot be an APNs device token (for a 400's message), or nil when it can. Shows the token shortened.
    public static func problem(_ token: String) -> String? {
        guard !isWellFormed(token) else { return nil }
        let hex = token.allSatisfy { $0.isASCII && $0.isHexDigit }
        let what = hex ? "\(token.count) hex digits" : "\(token.count) characters, not all of them hex digits"
        var message =
            "Push token \(TokenDisplay.short(token)) is not an APNs device token: it has \(what), and an APNs device token is 64 to 200 hex digits."
        if !hex, token.contains(":") {
            message += " It looks like an FCM registration token, which goes to an fcm provider, not to APNs."
        }
        return message
    }
}
