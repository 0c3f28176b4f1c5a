/// What a delivery is, as the delivery log names it (`delivery_log.kind`).
public enum DeliveryKind: String, Sendable {
    /// A notification from Home Assistant or a Matrix homeserver.
    case notification
    /// The one push per token and day that says its quota is spent.
    case rateLimitNotice = "rate_limit_notice"
    /// A WebPush message relayed to APNs or FCM.
    case webPushRelay = "webpush_relay"
    /// A call-invite push (`POST /api/v1/calls`).
    case callInvite = "call_invite"
}
