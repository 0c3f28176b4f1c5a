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
    /// Deletes at most `limit` expired rows in one short transaction: usage and delivery-log days older than
    /// `retentionDays` before `today`, and dead tokens expired by `today`'s start. Returns the rows deleted; fewer than
    /// `limit` means nothing expired is left. Use `prune(today:retentionDays:pace:)` to delete them all.
    func pruneStep(today: UTCDay, retentionDays: Int, limit: Int) async throws -> Int
}

/// How pruning paces itself so that it never holds up requests: each step is one transaction of at most
/// `rowsPerStep` deleted rows (a few milliseconds of the writer), and between steps it pauses for `pause` or as long as
/// the step took, whichever is longer, so that pruning takes at most half of the database's time and the request
/// path's writes and the WAL checkpoints run in between.
public struct PrunePace: Sendable {
    public var rowsPerStep: Int
    public var pause: Duration
    /// Where each step is timed and the pause waited (the server passes its own).
    public var clock: any TimePort

    public init(rowsPerStep: Int = 2_000, pause: Duration = .milliseconds(10), clock: any TimePort) {
        self.rowsPerStep = max(rowsPerStep, 1)
        self.pause = pause
        self.clock = clock
    }
}

extension QuotaAdministration {
    public func history(pushToken: String) async throws -> (rows: [UsageRow], limitOverride: Int?) {
        try await history(pushToken: pushToken, days: 30)
    }

    public func setLimit(pushToken: String, limit: Int) async throws {
        try await setLimit(pushToken: pushToken, limit: limit, now: Date())
    }

    /// Deletes every expired row (see `pruneStep`) in steps of `pace.rowsPerStep`, pausing between steps (`PrunePace`).
    /// `progress` hears each step's count. Returns the rows deleted. Cancellation stops it between steps.
    @discardableResult
    public func prune(
        today: UTCDay,
        retentionDays: Int,
        pace: PrunePace,
        progress: (Int) -> Void = { _ in }
    ) async throws -> Int {
        var total = 0
        while true {
            let started = pace.clock.instant
            let n = try await pruneStep(today: today, retentionDays: retentionDays, limit: pace.rowsPerStep)
            total += n
            if n > 0 { progress(n) }
            if n < pace.rowsPerStep { return total }
            try? await pace.clock.sleep(for: max(pace.pause, started.duration(to: pace.clock.instant)))
            if Task.isCancelled { return total }
        }
    }
}
