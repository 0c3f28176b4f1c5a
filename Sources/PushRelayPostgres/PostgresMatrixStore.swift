import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// PostgreSQL side of the Matrix gateway: the (event id, pushkey) de-duplication window, shared by every instance,
/// and the retry queue, whose items an instance claims (`claimDue`: `FOR UPDATE SKIP LOCKED` and a lease in
/// `claimed_until`) so that no two instances retry the same item.
public final class PostgresMatrixStore: MatrixStorage {
    let engine: PostgresStorageEngine

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
    }

    // MARK: De-duplication

    public func lookup(
        eventID: String?,
        pushkeys: [String],
        deadKeys: [String],
        since: Date,
        now: Date
    ) async throws -> (seen: Set<String>, dead: Set<String>) {
        let cutoff = since.epochMilliseconds
        let stamp = ISO8601UTC.string(now)
        let rows = try await engine.rows(
            """
            SELECT 's', pushkey FROM matrix_dedup WHERE event_id = \(eventID) AND pushkey = ANY(\(pushkeys)) AND seen_at >= \(cutoff)
            UNION ALL
            SELECT 'd', push_token FROM dead_tokens WHERE push_token = ANY(\(deadKeys)) AND expires_at > \(stamp)
            """,
            write: false
        )
        var seen: Set<String> = []
        var dead: Set<String> = []
        for row in rows {
            let (kind, key) = try row.decode((String, String).self)
            if kind == "s" { seen.insert(key) } else { dead.insert(key) }
        }
        return (seen, dead)
    }

    /// One statement: a concurrent claim of the same pair waits for this one's commit and then finds its row.
    public func claim(eventID: String, pushkeys: [String], since: Date, at: Date) async throws -> Set<String> {
        guard !pushkeys.isEmpty else { return [] }
        let stamp = at.epochMilliseconds
        let cutoff = since.epochMilliseconds
        // A row older than the window is an expired mark: claiming refreshes it.
        let rows = try await engine.rows(
            """
            INSERT INTO matrix_dedup (event_id, pushkey, seen_at)
            SELECT DISTINCT \(eventID)::text, k, \(stamp)::bigint FROM unnest(\(pushkeys)::text[]) AS x(k)
            ON CONFLICT (event_id, pushkey) DO UPDATE SET seen_at = excluded.seen_at WHERE matrix_dedup.seen_at < \(cutoff)
            RETURNING pushkey
            """,
            write: true
        )
        return Set(try rows.map { try $0.decode(String.self) })
    }

    /// One statement instead of `lookup` and `claim`: the dead keys, and the claims of the pushkeys with a device
    /// that is not dead (a concurrent claim of the same pair waits for this one's commit, as in `claim`).
    public func claimUnlessDead(
        eventID: String,
        devices: [(pushkey: String, deadKey: String)],
        since: Date,
        at now: Date
    ) async throws -> (claimed: Set<String>, dead: Set<String>) {
        guard !devices.isEmpty else { return ([], []) }
        let pushkeys = devices.map(\.pushkey)
        let deadKeys = devices.map(\.deadKey)
        let stamp = now.epochMilliseconds
        let cutoff = since.epochMilliseconds
        let deadStamp = ISO8601UTC.string(now)
        // A row older than the window is an expired mark: claiming refreshes it.
        let rows = try await engine.rows(
            """
            WITH dead AS (
                SELECT push_token FROM dead_tokens WHERE push_token = ANY(\(deadKeys)) AND expires_at > \(deadStamp)
            ), claimed AS (
                INSERT INTO matrix_dedup (event_id, pushkey, seen_at)
                SELECT DISTINCT \(eventID)::text, k, \(stamp)::bigint FROM unnest(\(pushkeys)::text[], \(deadKeys)::text[]) AS x(k, d)
                WHERE d NOT IN (SELECT push_token FROM dead)
                ON CONFLICT (event_id, pushkey) DO UPDATE SET seen_at = excluded.seen_at WHERE matrix_dedup.seen_at < \(cutoff)
                RETURNING pushkey
            )
            SELECT 'c', pushkey FROM claimed UNION ALL SELECT 'd', push_token FROM dead
            """,
            write: true
        )
        var claimed: Set<String> = []
        var dead: Set<String> = []
        for row in rows {
            let (kind, key) = try row.decode((String, String).self)
            if kind == "c" { claimed.insert(key) } else { dead.insert(key) }
        }
        return (claimed, dead)
    }

    public func release(eventID: String, pushkeys: [String], claimedAt: Date) async throws {
        guard !pushkeys.isEmpty else { return }
        let stamp = claimedAt.epochMilliseconds
        try await engine.rows(
            "DELETE FROM matrix_dedup WHERE event_id = \(eventID) AND pushkey = ANY(\(pushkeys)) AND seen_at = \(stamp)",
            write: true
        )
    }

    public func markSent(eventID: String, pushkeys: [String], at: Date) async throws {
        guard !pushkeys.isEmpty else { return }
        let query = Self.dedup(eventIDs: Array(repeating: eventID, count: pushkeys.count), pushkeys: pushkeys, at: at.epochMilliseconds)
        try await engine.rows(query, write: true)
    }

    /// Upserts `(eventIDs[i], pushkeys[i])` seen at `at`, in one statement.
    private static func dedup(eventIDs: [String], pushkeys: [String], at: Int64) -> PostgresQuery {
        """
        INSERT INTO matrix_dedup (event_id, pushkey, seen_at)
        SELECT DISTINCT ON (e, k) e, k, \(at) FROM unnest(\(eventIDs)::text[], \(pushkeys)::text[]) AS x(e, k)
        ON CONFLICT (event_id, pushkey) DO UPDATE SET seen_at = excluded.seen_at
        """
    }

    // MARK: Retry queue

    public func enqueue(
        _ items: [(appID: String, pushkey: String, eventID: String?, notification: String, lastError: String)],
        attempts: Int,
        nextAttemptAt: Date,
        now: Date
    ) async throws {
        guard !items.isEmpty else { return }
        let next = nextAttemptAt.epochMilliseconds
        let created = now.epochMilliseconds
        let logger = engine.logger
        let withEvents = items.compactMap { i in i.eventID.map { ($0, i.pushkey) } }
        try await engine.transaction { connection in
            for item in items {
                _ = try await connection.query(
                    """
                    INSERT INTO matrix_retry_queue (app_id, pushkey, event_id, notification, attempts, next_attempt_at, created_at, last_error)
                    VALUES (\(item.appID), \(item.pushkey), \(item.eventID), \(item.notification), \(attempts), \(next), \(created), \(item.lastError))
                    """,
                    logger: logger
                ).collect()
            }
            if !withEvents.isEmpty {
                _ = try await connection.query(
                    Self.dedup(eventIDs: withEvents.map(\.0), pushkeys: withEvents.map(\.1), at: created),
                    logger: logger
                ).collect()
            }
        }
    }

    /// Due items nobody holds a live claim on, without claiming them.
    public func due(now: Date, limit: Int) async throws -> [MatrixRetryItem] {
        let cutoff = now.epochMilliseconds
        return try await engine.rows(
            """
            \(unescaped: Self.select) WHERE next_attempt_at <= \(cutoff) AND claimed_until <= \(cutoff)
            ORDER BY next_attempt_at, id LIMIT \(limit)
            """,
            write: false
        ).map(Self.item)
    }

    /// Claims due items until `now + lease`: rows another transaction is claiming are skipped, not waited for.
    public func claimDue(now: Date, limit: Int, lease: Duration) async throws -> [MatrixRetryItem] {
        let cutoff = now.epochMilliseconds
        let until = cutoff + lease.components.seconds * 1000 + lease.components.attoseconds / 1_000_000_000_000_000
        let items = try await engine.rows(
            """
            UPDATE matrix_retry_queue q SET claimed_until = \(until)
            FROM (
                SELECT id FROM matrix_retry_queue WHERE next_attempt_at <= \(cutoff) AND claimed_until <= \(cutoff)
                ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ) c
            WHERE q.id = c.id
            RETURNING q.id, q.app_id, q.pushkey, q.event_id, q.notification, q.attempts, q.next_attempt_at, q.created_at, q.last_error
            """,
            write: true
        ).map(Self.item)
        return items.sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
    }

    public func queuedCount() async throws -> Int {
        try await engine.rows("SELECT count(*) FROM matrix_retry_queue", write: false).first?.decode(Int.self) ?? 0
    }

    public func queued() async throws -> [MatrixRetryItem] {
        try await engine.rows("\(unescaped: Self.select) ORDER BY id", write: false).map(Self.item)
    }

    public func remove(id: Int64) async throws {
        try await engine.rows("DELETE FROM matrix_retry_queue WHERE id = \(id)", write: true)
    }

    /// Ends the claim too: the item is due again at `next`, for any instance.
    public func reschedule(id: Int64, attempts: Int, next: Date, lastError: String) async throws {
        let nextMS = next.epochMilliseconds
        try await engine.rows(
            """
            UPDATE matrix_retry_queue SET attempts = \(attempts), next_attempt_at = \(nextMS), last_error = \(lastError), claimed_until = 0
            WHERE id = \(id)
            """,
            write: true
        )
    }

    @discardableResult
    public func pruneDedup(before: Date) async throws -> Int {
        let cutoff = before.epochMilliseconds
        return try await engine.rows(
            "WITH d AS (DELETE FROM matrix_dedup WHERE seen_at < \(cutoff) RETURNING 1) SELECT count(*) FROM d",
            write: true
        ).first?.decode(Int.self) ?? 0
    }

    private static let select =
        "SELECT id, app_id, pushkey, event_id, notification, attempts, next_attempt_at, created_at, last_error FROM matrix_retry_queue"

    private static func item(_ row: PostgresRow) throws -> MatrixRetryItem {
        let (id, app, pushkey, event, notification, attempts, next, created, lastError) = try row.decode(
            (Int64, String, String, String?, String, Int, Int64, Int64, String?).self
        )
        return MatrixRetryItem(
            id: id,
            appID: app,
            pushkey: pushkey,
            eventID: event,
            notification: notification,
            attempts: attempts,
            nextAttemptAt: Date(epochMilliseconds: next),
            createdAt: Date(epochMilliseconds: created),
            lastError: lastError
        )
    }
}
