/// What kind of push a delivery is; providers may treat the notice differently in logs.
public enum DeliveryKind: String, Sendable {
    case notification
    case rateLimitNotice = "rate_limit_notice"
}

/// One notification ready for a provider.
public struct Delivery: Sendable {
    public var platform: HAPlatform
    public var pushToken: String
    public var appID: String?
    public var notification: TranslatedNotification
    public var kind: DeliveryKind

    public init(platform: HAPlatform, pushToken: String, appID: String?, notification: TranslatedNotification, kind: DeliveryKind = .notification) {
        self.platform = platform
        self.pushToken = pushToken
        self.appID = appID
        self.notification = notification
        self.kind = kind
    }
}

/// A provider accepted the notification.
public struct DeliveryReceipt: Sendable, Equatable {
    /// The provider's own message id (FCM `name`, APNs `apns-id`, or `sandbox:<uuid>`).
    public var messageID: String
    /// What was (or, for the sandbox, would have been) sent upstream.
    public var sentPayload: JSONValue

    public init(messageID: String, sentPayload: JSONValue) {
        self.messageID = messageID
        self.sentPayload = sentPayload
    }
}

/// Why a provider did not deliver. Typed so callers switch on it instead of comparing strings.
public enum DeliveryFailure: Error, Sendable, Equatable {
    /// The token is dead or not for this app (FCM UNREGISTERED, APNs 410/BadDeviceToken…). `reason` is the provider's.
    case invalidToken(reason: String, message: String)
    /// The payload exceeds the provider's limit.
    case payloadTooLarge(message: String)
    /// The provider rejected the payload for another reason.
    case invalidPayload(reason: String, message: String)
    /// The request names a target the provider cannot address: a malformed device token, a push service that is not
    /// allowed. The caller's mistake; nothing was sent, and the token is not remembered as dead. `reason` names the
    /// problem (`MalformedToken`, `EndpointNotAllowed`).
    case invalidTarget(reason: String, message: String)
    /// Worth retrying: 429/500/503, timeouts, connection errors. `retryAfterSeconds` from `Retry-After` when given.
    case transient(reason: String, message: String, retryAfterSeconds: Int?)
    /// The relay is misconfigured for this app (wrong credentials, sender id mismatch, no route).
    case configuration(message: String)

    public var message: String {
        switch self {
        case .invalidToken(_, let m), .payloadTooLarge(let m), .invalidPayload(_, let m), .invalidTarget(_, let m), .transient(_, let m, _),
             .configuration(let m):
            return m
        }
    }
}

extension DeliveryFailure {
    /// `invalidTarget` reasons (also the `errorType` of the HTTP answer).
    public static let malformedToken = "MalformedToken"
    public static let endpointNotAllowed = "EndpointNotAllowed"
}

/// The seam every delivery route implements: send one translated notification.
public protocol PushProvider: Sendable {
    /// The configured instance name (`providers.<name>`).
    var name: String { get }
    /// Whether the delivery log keeps the upstream payload for this provider (the sandbox's only output).
    var recordsPayload: Bool { get }
    /// The provider answers in-process without I/O (the sandbox): no deadline race or retries are needed around it.
    var isLocal: Bool { get }
    func send(_ delivery: Delivery) async throws(DeliveryFailure) -> DeliveryReceipt
    /// Releases connections. Called once, after the last delivery.
    func shutdown() async
}

extension PushProvider {
    public var recordsPayload: Bool { false }
    public var isLocal: Bool { false }
    public func shutdown() async {}
}
