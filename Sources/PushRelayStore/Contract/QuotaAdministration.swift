import Foundation
import PushRelayCore

/// What admins do with quotas: list a day, read a token's history, set or clear its override, reset its day, prune.
public protocol QuotaAdministration: Sendable {
    /// Usage for one day, busiest tokens first (`top`: at most that many).
    func list(day: UTCDay, top: Int?) async throws -> [UsageRow]
    /// The token's recent days (newest first) and its override.
    func history(pushToken: String, days: Int) async throws -> (rows: [UsageRow], limitOverride: Int?)
    /// Sets a per-token limit override (it applies from the next request).
    func setLimit(pushToken: String, limit: Int, now: Date) async throws
    /// Removes a per-token override. Returns whether one existed.
    @discardableResult
    func clearLimit(pushToken: String) async throws -> Bool
    /// Deletes the token's counters for a day (the notice may be sent again that day). Returns whether a row existed.
    @discardableResult
    func reset(pushToken: String, day: UTCDay) async throws -> Bool
    /// Deletes usage and delivery-log days older than `retentionDays` before `today`, and expired dead tokens.
    /// Returns the rows deleted.
    @discardableResult
    func prune(today: UTCDay, retentionDays: Int) async throws -> Int
}

extension QuotaAdministration {
    public func history(pushToken: String) async throws -> (rows: [UsageRow], limitOverride: Int?) {
        try await history(pushToken: pushToken, days: 30)
    }

    public func setLimit(pushToken: String, limit: Int) async throws {
        try await setLimit(pushToken: pushToken, limit: limit, now: Date())
    }
}
