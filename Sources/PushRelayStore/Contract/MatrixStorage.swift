import Foundation

/// The Matrix gateway's state: the (event id, pushkey) de-duplication window and the durable retry queue.
public protocol MatrixStorage: Sendable {
    /// In one read: which of `pushkeys` got `eventID` since `since`, and which of `deadKeys` are remembered as dead (in
    /// the delivery pipeline's dead-token memory, which `DeliveryLog.markDead` and the dispatcher write).
    func lookup(
        eventID: String?,
        pushkeys: [String],
        deadKeys: [String],
        since: Date,
        now: Date
    ) async throws
        -> (seen: Set<String>, dead: Set<String>)
    /// Claims `eventID` for each of `pushkeys` that has had neither a mark nor a claim of it since `since`, and returns
    /// those: the caller alone delivers the event to them. Of concurrent claims of one (event id, pushkey), from any
    /// instance, exactly one gets it. From the return on, a claim counts as sent, stamped `at`, for `lookup` and later
    /// claims, until `release` ends it.
    func claim(eventID: String, pushkeys: [String], since: Date, at: Date) async throws -> Set<String>
    /// `lookup`'s dead keys and `claim` in one step: which `deadKey`s of `devices` are remembered as dead at `now`, and
    /// the claims of `eventID` (as `claim` makes them) for the pushkeys of the other devices. A pushkey is claimed
    /// when at least one of its devices is not dead. What `claim` promises holds for the returned claims.
    func claimUnlessDead(
        eventID: String,
        devices: [(pushkey: String, deadKey: String)],
        since: Date,
        at now: Date
    ) async throws -> (claimed: Set<String>, dead: Set<String>)
    /// Ends the claims that `claim` made at `claimedAt` on `pushkeys` (their delivery did not happen), so that a repeat
    /// of the event is pushed to them. A mark written since (`markSent`, a queued retry) stays. Returns once `lookup`
    /// and `claim` no longer see the claims.
    func release(eventID: String, pushkeys: [String], claimedAt: Date) async throws
    /// Remembers that `eventID` went to `pushkeys`, whatever the window (the gateway's own deliveries are marked by
    /// their `claim`). Returns once `lookup` and `claim` see it.
    func markSent(eventID: String, pushkeys: [String], at: Date) async throws
    /// Queues device deliveries for a retry at `nextAttemptAt`. Returns once durable.
    func enqueue(
        _ items: [(appID: String, pushkey: String, eventID: String?, notification: String, lastError: String)],
        attempts: Int,
        nextAttemptAt: Date,
        now: Date
    ) async throws
    /// Items due at `now`, earliest first (items another instance holds a live claim on are not due).
    func due(now: Date, limit: Int) async throws -> [MatrixRetryItem]
    /// Items due at `now`, earliest first, claimed until `now + lease`: no other caller (of any instance) gets them
    /// from `due` or `claimDue` before that, unless `remove` or `reschedule` ends the claim first. A claimer that
    /// crashed leaves its items due again once the lease ends.
    func claimDue(now: Date, limit: Int, lease: Duration) async throws -> [MatrixRetryItem]
    func queued() async throws -> [MatrixRetryItem]
    /// How many devices the retry queue holds (`matrix.retry.max_queued` bounds it).
    func queuedCount() async throws -> Int
    func remove(id: Int64) async throws
    func reschedule(id: Int64, attempts: Int, next: Date, lastError: String) async throws
    /// Forgets de-duplication entries older than `before`. Returns how many.
    func pruneDedup(before: Date) async throws -> Int
}

extension MatrixStorage {
    /// For an engine used by one process only (SQLite): its one retry loop is the only claimer, so what is due is
    /// what it claims.
    public func claimDue(now: Date, limit: Int, lease: Duration) async throws -> [MatrixRetryItem] {
        try await due(now: now, limit: limit)
    }
}
