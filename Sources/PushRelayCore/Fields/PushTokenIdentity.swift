/// The one spelling of a device's push token that PushRelay keys everything by: quotas, the dead-token memory,
/// de-duplication, push-channel bindings and the delivery log.
///
/// Providers read some tokens case-insensitively: APNs takes a device token's hex digits in either case, so
/// `ABCD…` and `abcd…` reach one device. Were they counted apart, a caller could beat the daily quota by changing
/// the case of each post. Every entry point passes a token through `canonical(_:)` once, where it reads it.
public enum PushTokenIdentity {
    /// `token` as the device is known: a token APNs would take (`APNsDeviceToken`: 64 to 200 hex digits, a device or
    /// Live Activity token) in lower case; anything else (an FCM registration token, which is case-sensitive)
    /// unchanged.
    public static func canonical(_ token: String) -> String {
        guard APNsDeviceToken.lengths.contains(token.utf8.count) else { return token }
        var hasUpper = false
        for byte in token.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): hasUpper = true
            default: return token
            }
        }
        return hasUpper ? token.lowercased() : token
    }
}
