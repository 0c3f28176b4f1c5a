import Foundation
import PushRelayCore

/// Quota and usage on the request path. The engine makes the decision, atomically: any number of callers, connections
/// or instances reserving for one token and UTC day get exactly `maximum` slots between them.
public protocol QuotaLedger: Sendable {
    /// Checks the token's limit and takes a slot in one atomic step, keeping `appID` and `webhookID` with the day's row.
    /// With `checkDead`, a token remembered as dead is answered `.dead` and nothing is counted. Returns after the
    /// decision is durable.
    func reserveUnlessDead(
        pushToken: String,
        appID: String?,
        webhookID: String?,
        day: UTCDay,
        policy: QuotaPolicy,
        now: Date,
        checkDead: Bool
    ) async throws -> ReserveResult
    /// Records how a delivery ended, atomically: the delivery-log row, the dead-token mark if any, and for a failed
    /// counted delivery its slot turned into an error. Returns the reservation's day counters afterwards (nil without
    /// a reservation).
    func complete(_ reservation: QuotaReservation?, record: DeliveryRecord, markDead: DeadMark?) async throws -> UsageCounters?
    /// Logs a successful delivery without waiting for it to be durable (its count is durable already, with its
    /// reservation). `onError` hears about a failed write.
    func recordDelivered(_ record: DeliveryRecord, day: UTCDay, onError: @escaping @Sendable (any Error) -> Void)
    /// The token's `rateLimits` for a day, read-only, agreeing with every reservation answered before the call.
    func rateLimits(pushToken: String, appID: String?, day: UTCDay, policy: QuotaPolicy) async throws -> RateLimits
}

extension QuotaLedger {
    /// A reservation without the dead-token check.
    public func reserve(
        pushToken: String,
        appID: String?,
        webhookID: String? = nil,
        day: UTCDay,
        policy: QuotaPolicy,
        now: Date
    ) async throws -> QuotaReservation {
        switch try await reserveUnlessDead(
            pushToken: pushToken,
            appID: appID,
            webhookID: webhookID,
            day: day,
            policy: policy,
            now: now,
            checkDead: false
        ) {
        case .reserved(let r): return r
        case .dead: preconditionFailure("dead tokens are not checked here")
        }
    }

    public func complete(_ reservation: QuotaReservation?, record: DeliveryRecord) async throws -> UsageCounters? {
        try await complete(reservation, record: record, markDead: nil)
    }
}
