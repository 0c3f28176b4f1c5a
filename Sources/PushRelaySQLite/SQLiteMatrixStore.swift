import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// The Matrix gateway's tables: the durable retry queue and the (event_id, pushkey) de-duplication window.
/// Writes are group-committed with the rest of PushRelay's request-path writes.
public final class SQLiteMatrixStore: MatrixStorage {
    public let database: PushRelayDatabase

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    // MARK: De-duplication

    /// What one notify request needs to know before sending, in one read: which pushkeys already got `eventID`
    /// since `since`, and which of `deadKeys` were found dead by a background retry (to be answered `rejected`).
    public func lookup(
        eventID: String?,
        pushkeys: [String],
        deadKeys: [String],
        since: Date,
        now: Date
    ) async throws -> (seen: Set<String>, dead: Set<String>) {
        let cutoff = since.epochMilliseconds
        let stamp = ISO8601UTC.string(now)
        return try await database.pool.read { db in
            var seen: Set<String> = []
            if let eventID {
                let statement = try db.cachedStatement(sql: "SELECT 1 FROM matrix_dedup WHERE event_id = ? AND pushkey = ? AND seen_at >= ?")
                for key in pushkeys where try Bool.fetchOne(statement, arguments: [eventID, key, cutoff]) != nil {
                    seen.insert(key)
                }
            }
            var dead: Set<String> = []
            let deadStatement = try db.cachedStatement(sql: "SELECT 1 FROM dead_tokens WHERE push_token = ? AND expires_at > ?")
            for key in deadKeys where try Bool.fetchOne(deadStatement, arguments: [key, stamp]) != nil {
                dead.insert(key)
            }
            return (seen, dead)
        }
    }

    /// Claims in the next group-committed transaction: claims in one transaction, or in the one writer's successive
    /// transactions, see each other, so one claim of a pair wins.
    public func claim(eventID: String, pushkeys: [String], since: Date, at: Date) async throws -> Set<String> {
        let keys = Self.unique(pushkeys)
        guard !keys.isEmpty else { return [] }
        let stamp = at.epochMilliseconds
        let cutoff = since.epochMilliseconds
        return try await database.batcher.write { db in try Self.claim(db, eventID: eventID, keys: keys, stamp: stamp, cutoff: cutoff) }
    }

    /// The dead-token check and the claims in one group-committed transaction (one trip to the writer instead of a
    /// read and a write): the writer sees every committed mark, dead token and claim.
    public func claimUnlessDead(
        eventID: String,
        devices: [(pushkey: String, deadKey: String)],
        since: Date,
        at now: Date
    ) async throws -> (claimed: Set<String>, dead: Set<String>) {
        guard !devices.isEmpty else { return ([], []) }
        let stamp = now.epochMilliseconds
        let cutoff = since.epochMilliseconds
        let deadStamp = ISO8601UTC.string(now)
        return try await database.batcher.write { db in
            let deadStatement = try db.cachedStatement(sql: "SELECT 1 FROM dead_tokens WHERE push_token = ? AND expires_at > ?")
            var dead: Set<String> = []
            for device in devices where try Bool.fetchOne(deadStatement, arguments: [device.deadKey, deadStamp]) != nil {
                dead.insert(device.deadKey)
            }
            let keys = Self.unique(devices.filter { !dead.contains($0.deadKey) }.map(\.pushkey))
            return (try Self.claim(db, eventID: eventID, keys: keys, stamp: stamp, cutoff: cutoff), dead)
        }
    }

    /// Claims `eventID` for each of `keys` (without repeats) that has no row since `cutoff`; returns those.
    private static func claim(_ db: Database, eventID: String, keys: [String], stamp: Int64, cutoff: Int64) throws -> Set<String> {
        // A row older than the window is an expired mark: claiming refreshes it.
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO matrix_dedup (event_id, pushkey, seen_at) VALUES (?, ?, ?)
                ON CONFLICT (event_id, pushkey) DO UPDATE SET seen_at = excluded.seen_at WHERE matrix_dedup.seen_at < ?
                """
        )
        var won: Set<String> = []
        for key in keys {
            try statement.execute(arguments: [eventID, key, stamp, cutoff])
            if db.changesCount > 0 { won.insert(key) }
        }
        return won
    }

    public func release(eventID: String, pushkeys: [String], claimedAt: Date) async throws {
        guard !pushkeys.isEmpty else { return }
        let stamp = claimedAt.epochMilliseconds
        try await database.batcher.write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM matrix_dedup WHERE event_id = ? AND pushkey = ? AND seen_at = ?")
            for key in pushkeys { try statement.execute(arguments: [eventID, key, stamp]) }
        }
    }

    /// Written in the next group-committed transaction; returns after its commit.
    public func markSent(eventID: String, pushkeys: [String], at: Date) async throws {
        guard !pushkeys.isEmpty else { return }
        let stamp = at.epochMilliseconds
        try await database.batcher.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO matrix_dedup (event_id, pushkey, seen_at) VALUES (?, ?, ?)
                    ON CONFLICT (event_id, pushkey) DO UPDATE SET seen_at = excluded.seen_at
                    """
            )
            for key in pushkeys { try statement.execute(arguments: [eventID, key, stamp]) }
        }
    }

    /// `keys` without repeats, in their first order.
    private static func unique(_ keys: [String]) -> [String] {
        var seen: Set<String> = []
        return keys.filter { seen.insert($0).inserted }
    }

    // MARK: Retry queue

    /// Queues devices for a later retry; returns after the commit (the homeserver is told 200 only then).
    /// Their events count as sent for de-duplication from now on.
    public func enqueue(
        _ items: [(appID: String, pushkey: String, eventID: String?, notification: String, lastError: String)],
        attempts: Int,
        nextAttemptAt: Date,
        now: Date
    ) async throws {
        guard !items.isEmpty else { return }
        let next = nextAttemptAt.epochMilliseconds
        let created = now.epochMilliseconds
        try await database.batcher.write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO matrix_retry_queue (app_id, pushkey, event_id, notification, attempts, next_attempt_at, created_at, last_error)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            let dedup = try db.cachedStatement(
                sql: """
                    INSERT INTO matrix_dedup (event_id, pushkey, seen_at) VALUES (?, ?, ?)
                    ON CONFLICT (event_id, pushkey) DO UPDATE SET seen_at = excluded.seen_at
                    """
            )
            for item in items {
                try insert.execute(arguments: [item.appID, item.pushkey, item.eventID, item.notification, attempts, next, created, item.lastError])
                if let e = item.eventID { try dedup.execute(arguments: [e, item.pushkey, created]) }
            }
        }
    }

    /// Up to `limit` items due at `now`, oldest due first.
    public func due(now: Date, limit: Int) async throws -> [MatrixRetryItem] {
        try await database.batcher.flush()
        let cutoff = now.epochMilliseconds
        return try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, app_id, pushkey, event_id, notification, attempts, next_attempt_at, created_at, last_error
                    FROM matrix_retry_queue WHERE next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                    """,
                arguments: [cutoff, limit]
            ).map(Self.item)
        }
    }

    /// Every queued item (admin, tests).
    public func queuedCount() async throws -> Int {
        try await database.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM matrix_retry_queue") ?? 0 }
    }

    public func queued() async throws -> [MatrixRetryItem] {
        try await database.batcher.flush()
        return try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, app_id, pushkey, event_id, notification, attempts, next_attempt_at, created_at, last_error
                    FROM matrix_retry_queue ORDER BY id
                    """
            ).map(Self.item)
        }
    }

    /// The item was delivered or given up on.
    public func remove(id: Int64) async throws {
        try await database.batcher.write { db in
            try db.execute(sql: "DELETE FROM matrix_retry_queue WHERE id = ?", arguments: [id])
        }
    }

    /// Another attempt failed transiently: try again at `next`.
    public func reschedule(id: Int64, attempts: Int, next: Date, lastError: String) async throws {
        try await database.batcher.write { db in
            try db.execute(
                sql: "UPDATE matrix_retry_queue SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?",
                arguments: [attempts, next.epochMilliseconds, lastError, id]
            )
        }
    }

    /// Forgets de-duplication entries older than `before`. Returns how many.
    @discardableResult
    public func pruneDedup(before: Date) async throws -> Int {
        let cutoff = before.epochMilliseconds
        return try await database.batcher.write { db in
            try db.execute(sql: "DELETE FROM matrix_dedup WHERE seen_at < ?", arguments: [cutoff])
            return db.changesCount
        }
    }

    private static func item(_ r: Row) -> MatrixRetryItem {
        MatrixRetryItem(
            id: r[0],
            appID: r[1],
            pushkey: r[2],
            eventID: r[3],
            notification: r[4],
            attempts: r[5],
            nextAttemptAt: Date(epochMilliseconds: r[6]),
            createdAt: Date(epochMilliseconds: r[7]),
            lastError: r[8]
        )
    }
}
