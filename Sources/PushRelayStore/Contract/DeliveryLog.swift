import Foundation
import PushRelayCore

/// The delivery log and the memory of dead tokens.
public protocol DeliveryLog: Sendable {
    /// The dead-token entry of a token, if one is live at `now`.
    func deadToken(_ pushToken: String, now: Date) async throws -> DeadToken?
    /// Remembers a token as dead until `mark.until`.
    func markDead(_ pushToken: String, _ mark: DeadMark, now: Date) async throws
    /// Forgets a dead token (an admin fixed a misconfiguration). Returns whether one was stored.
    @discardableResult
    func forgetDead(_ pushToken: String) async throws -> Bool
    /// Logs a delivery that touched no counter.
    func log(_ record: DeliveryRecord) async throws
    /// Recent delivery-log rows, newest first, including every write answered before the call.
    func recentDeliveries(pushToken: String?, limit: Int) async throws -> [LoggedDelivery]
    /// The day's delivery-log rows counted by hour, provider, kind and outcome (the admin console). Default: a scan of
    /// at most `scanLimit` recent rows (`DeliverySummary.swift`).
    func deliverySummary(day: UTCDay, scanLimit: Int) async throws -> DeliverySummary
    /// Dead tokens live at `now`, newest first, at most `limit`. Default: the tokens of recent failed rows.
    func deadTokens(now: Date, limit: Int) async throws -> [ListedDeadToken]
    /// Returns once every write queued before the call is durable.
    func flush() async throws
}

extension DeliveryLog {
    public func recentDeliveries(pushToken: String? = nil) async throws -> [LoggedDelivery] {
        try await recentDeliveries(pushToken: pushToken, limit: 100)
    }
}
