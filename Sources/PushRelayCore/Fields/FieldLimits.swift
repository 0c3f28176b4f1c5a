/// The longest values PushRelay takes for the fields a caller supplies that it stores: push tokens and pushkeys (quota
/// rows, the delivery log, the dead-token memory, push-channel bindings and messages, the Matrix de-duplication window
/// and retry queue), webhook ids, app ids, event ids and titles. Every entry point checks them where it reads a request,
/// so a value past its bound is answered 400 before the quota, or anything else, is read or written.
///
/// The bounds are generous: a real FCM registration token is about 160 to 200 characters, an APNs device or Live
/// Activity token 64 to 200 hex digits, a WebPush endpoint a URL well under 1 KiB; Home Assistant's webhook ids are 64
/// hex digits; Matrix caps event ids at 255 bytes and app ids at 64 characters. Lengths are counted in UTF-8 bytes.
public enum FieldLimits {
    /// A push token, a Live Activity token or a Matrix pushkey: 4 KiB.
    public static let token = 4096
    /// A webhook id, an app id or a Matrix event id: 256 bytes.
    public static let identifier = 256
    /// A notification's title: 4 KiB (the providers take about 4 KiB for a whole notification).
    public static let title = 4096

    /// Why `value` of `field` is refused, or nil when it is within `limit` UTF-8 bytes (or absent).
    public static func problem(_ value: String?, field: String, limit: Int) -> String? {
        guard let value else { return nil }
        let bytes = value.utf8.count
        guard bytes > limit else { return nil }
        return "Field '\(field)' is \(bytes) bytes long; PushRelay takes at most \(limit) bytes for it. Nothing was sent or stored."
    }
}
