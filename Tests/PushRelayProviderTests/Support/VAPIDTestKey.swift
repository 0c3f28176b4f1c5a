import PushRelayWebPush

/// A VAPID key in PEM form for configuration tests.
enum VAPIDTestKey {
    static let pem: String = VAPIDKey.generate().1
}
