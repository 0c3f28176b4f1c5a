import PushRelayCore

/// The WebPush → APNs/FCM relay's settings (`/relay-to/…`), with their defaults: `relay.*`, which
/// `PushRelayConfiguration` reads into it.
public struct WebPushRelaySettings: Sendable {
    /// Provider instance (type apns) for `/relay-to/{production|development}/…`; its `topic` is the app's bundle id.
    public var apnsProvider: String?
    /// Provider instance (type fcm) for `/relay-to/fcm/…`.
    public var fcmProvider: String?
    /// The alert the device shows when the app cannot decrypt the message.
    public var alertText = "New notification"
    /// Hosts PushRelay may send an `Unsubscribe-URL` DELETE to. Empty: never.
    public var unsubscribeAllowedHosts: [String] = []
    /// `relay.unsubscribe_allowed_private_networks`: loopback, private, link-local… networks an allowed host may
    /// resolve to. Empty: a host that is or resolves to such an address gets no DELETE (`OutboundAddressPolicy`).
    public var unsubscribeAddressPolicy = OutboundAddressPolicy()
    /// Relayed messages per device token and UTC day; 0 = no limit.
    public var dailyLimitPerToken = 0
    /// Relay requests per sender address and minute; 0 = no limit.
    public var maxRequestsPerMinutePerAddress = 0
    /// Larger WebPush bodies are answered 413 (RFC 8030 push services accept at least 4096 bytes).
    public var maxBodyBytes = 8192

    public init() {}
}
