/// A notification as a WebPush message (RFC 8030/8291): where to send it, the subscription keys to encrypt to, and
/// the plaintext body. The `webpush` provider encrypts it (`aes128gcm`), signs VAPID and adds `TTL`.
public struct WebPushMessage: Sendable, Equatable {
    /// The push service URL from the browser's subscription (`endpoint`). Carries a per-subscription secret path:
    /// log only its host.
    public var endpoint: String
    /// The subscription's `p256dh` key (base64url, uncompressed P-256 point).
    public var p256dh: String
    /// The subscription's `auth` secret (base64url, 16 bytes).
    public var auth: String
    /// The plaintext to encrypt (the app's JSON).
    public var body: [UInt8]
    /// `Urgency`: `very-low`, `low`, `normal` or `high`; nil sends none.
    public var urgency: String?
    /// `Topic`: replaces a queued message with the same topic (at most 32 URL-safe base64 characters).
    public var topic: String?

    public init(endpoint: String, p256dh: String, auth: String, body: [UInt8], urgency: String? = nil, topic: String? = nil) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        self.body = body
        self.urgency = urgency
        self.topic = topic
    }
}
