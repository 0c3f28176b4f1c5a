import Foundation
import GRDB
import PushRelayCore

/// A push token a provider reported as dead.
public struct DeadToken: Sendable, Equatable {
    public var provider: String
    public var reason: String
    public var message: String?
    public var markedAt: String
    public var expiresAt: String
}

/// What to remember about a token a provider reported as dead.
public struct DeadMark: Sendable, Equatable {
    public var provider: String
    public var reason: String
    public var message: String?
    public var until: Date

    public init(provider: String, reason: String, message: String?, until: Date) {
        self.provider = provider
        self.reason = reason
        self.message = message
        self.until = until
    }
}

/// A slot reserved (or refused) for one counted request.
public struct QuotaReservation: Sendable, Equatable {
    public var day: UTCDay
    public var pushToken: String
    public var maximum: Int
    public var decision: QuotaDecision

    public var rateLimits: RateLimits { RateLimits(counters: decision.counters, maximum: maximum, day: day) }
}

/// How a delivery ended, for the ledger and the delivery log.
public struct DeliveryRecord: Sendable {
    public var at: Date
    public var pushToken: String
    public var appID: String?
    public var platform: String?
    public var provider: String
    public var kind: String
    public var counted: Bool
    /// `delivered` or the failure class.
    public var outcome: String
    public var messageID: String?
    public var errorMessage: String?
    /// The upstream payload, kept for sandbox deliveries.
    public var payload: String?

    public init(at: Date, pushToken: String, appID: String?, platform: String?, provider: String, kind: String, counted: Bool,
                outcome: String, messageID: String? = nil, errorMessage: String? = nil, payload: String? = nil) {
        self.at = at
        self.pushToken = pushToken
        self.appID = appID
        self.platform = platform
        self.provider = provider
        self.kind = kind
        self.counted = counted
        self.outcome = outcome
        self.messageID = messageID
        self.errorMessage = errorMessage
        self.payload = payload
    }
}

/// One row of `delivery_log`.
public struct LoggedDelivery: Sendable, Equatable, Codable {
    public var id: Int64
    public var at: String
    public var day: String
    public var pushToken: String
    public var appID: String?
    public var platform: String?
    public var provider: String
    public var kind: String
    public var counted: Bool
    public var outcome: String
    public var messageID: String?
    public var errorMessage: String?
    public var payload: String?
}

/// One row of `daily_usage` joined with the token's override.
public struct UsageRow: Sendable, Equatable, Codable {
    public var day: String
    public var pushToken: String
    public var appID: String?
    public var attempts: Int
    public var successful: Int
    public var errors: Int
    public var noticeSent: Bool
    public var limitOverride: Int?
    public var updatedAt: String

    public var counters: UsageCounters { UsageCounters(attempts: attempts, successful: successful, errors: errors) }
}

/// The quota ledger. Every write on the request path is group-committed; reads use WAL snapshots.
public final class QuotaStore: Sendable {
    public let database: PushRelayDatabase
    private var pool: DatabasePool { database.pool }

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    // MARK: Request path

    /// What `reserve` found.
    public enum ReserveResult: Sendable, Equatable {
        case reserved(QuotaReservation)
        /// The token is remembered as dead: nothing was counted.
        case dead(DeadToken, RateLimits)
    }

    /// Checks the limit and reserves a slot in one transaction (group-committed). Returns after the commit.
    public func reserve(pushToken: String, appID: String?, day: UTCDay, policy: QuotaPolicy, now: Date) async throws -> QuotaReservation {
        switch try await reserveUnlessDead(pushToken: pushToken, appID: appID, webhookID: nil, day: day, policy: policy, now: now, checkDead: false) {
        case .reserved(let r): return r
        case .dead: preconditionFailure("dead tokens are not checked here")
        }
    }

    /// Like `reserve`, but first answers `.dead` (touching no counter) for a token remembered as dead.
    ///
    /// `delivered` is for a provider that answers without I/O (the sandbox), whose delivery is its log row: that row
    /// is written in the same transaction when a slot is reserved, so one commit covers the whole request.
    public func reserveUnlessDead(pushToken: String, appID: String?, webhookID: String? = nil, day: UTCDay, policy: QuotaPolicy, now: Date,
                                  checkDead: Bool = true, delivered: DeliveryRecord? = nil) async throws -> ReserveResult {
        let dayKey = day.description
        let stamp = ISO8601UTC.string(now)
        let ledger = database.ledger
        return try await database.batcher.write { db in
            let usage = try ledger.usage(db, token: pushToken, day: dayKey)
            let maximum = policy.maximum(appID: appID, override: usage.override)
            if checkDead, let until = usage.deadUntil, until > stamp, let dead = try Self.deadToken(db, token: pushToken, now: stamp) {
                return .dead(dead, RateLimits(counters: usage.counters, maximum: maximum, day: day))
            }
            let decision = QuotaDecision.decide(current: usage.counters, maximum: maximum, noticeSent: usage.noticeSent)
            let reservation = QuotaReservation(day: day, pushToken: pushToken, maximum: maximum, decision: decision)
            // A delivery with nothing else to change is counted by its log row alone; the ledger folds it into the
            // token's row later, with others (UsageLedger). Anything else updates the row in place, pending rows included.
            if decision.allowed, let delivered, usage.cached, appID == nil || appID == usage.appID, webhookID == nil || webhookID == usage.webhookID {
                let id = try Self.insertLog(db, delivered, day: day, pendingUsage: true)
                ledger.countPending(token: pushToken, id: id, stamp: stamp)
                try ledger.maybeFold(db)
                return .reserved(reservation)
            }
            // The ledger knows whether the row exists: update it in place (one B-tree seek; an upsert seeks twice), or
            // insert the day's first. `errors` is left to `complete`, as before (?7 is only used by the insert).
            var write = try RawStatement(db, sql: usage.cached ? """
                UPDATE daily_usage SET app_id = coalesce(?3, app_id), webhook_id = coalesce(?4, webhook_id), attempts = ?5,
                    successful = ?6, notice_sent = ?8, updated_at = ?9, folded_log_id = max(folded_log_id, ?10)
                WHERE day = ?1 AND push_token = ?2
                """ : """
                INSERT INTO daily_usage (day, push_token, app_id, webhook_id, attempts, successful, errors, notice_sent, updated_at, folded_log_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            write.bind(dayKey)
            write.bind(pushToken)
            write.bind(appID)
            write.bind(webhookID)
            write.bind(decision.counters.attempts)
            write.bind(decision.counters.successful)
            write.bind(decision.counters.errors)
            write.bind(decision.noticeSent)
            write.bind(stamp)
            write.bind(Int(ledger.pendingThrough(token: pushToken)))
            try write.execute()
            ledger.stored(token: pushToken, day: dayKey, before: usage, counters: decision.counters, noticeSent: decision.noticeSent,
                          appID: appID ?? usage.appID, webhookID: webhookID ?? usage.webhookID)
            if decision.allowed, let delivered {
                try Self.insertLog(db, delivered, day: day)
            }
            try ledger.maybeFold(db)
            return .reserved(reservation)
        }
    }

    /// The dead-token entry for a token, if one is live at `now`.
    public func deadToken(_ pushToken: String, now: Date) async throws -> DeadToken? {
        let stamp = ISO8601UTC.string(now)
        return try await pool.read { db in try Self.deadToken(db, token: pushToken, now: stamp) }
    }

    /// Remembers a token as dead until `mark.until`.
    public func markDead(_ pushToken: String, _ mark: DeadMark, now: Date) async throws {
        let ledger = database.ledger
        try await database.batcher.write { db in try Self.insertDead(db, ledger, token: pushToken, mark: mark, now: now) }
    }

    /// Stores the mark, and has the ledger read the token's dead-token state again (also MatrixStore's).
    static func insertDead(_ db: Database, _ ledger: UsageLedger, token: String, mark: DeadMark, now: Date) throws {
        ledger.metadataChanged(token: token)
        try db.cachedStatement(sql: """
            INSERT INTO dead_tokens (push_token, provider, reason, message, marked_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (push_token) DO UPDATE SET provider = excluded.provider, reason = excluded.reason,
                message = excluded.message, marked_at = excluded.marked_at, expires_at = excluded.expires_at
            """).execute(arguments: [token, mark.provider, mark.reason, mark.message, ISO8601UTC.string(now), ISO8601UTC.string(mark.until)])
    }

    /// Forgets a dead token (e.g. after an admin fixed a misconfiguration). Returns whether one was stored.
    @discardableResult
    public func forgetDead(_ pushToken: String) async throws -> Bool {
        let ledger = database.ledger
        return try await database.batcher.write { db in
            try db.execute(sql: "DELETE FROM dead_tokens WHERE push_token = ?", arguments: [pushToken])
            ledger.metadataChanged(token: pushToken)
            return db.changesCount > 0
        }
    }

    private static func deadToken(_ db: Database, token: String, now: String) throws -> DeadToken? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT provider, reason, message, marked_at, expires_at FROM dead_tokens WHERE push_token = ? AND expires_at > ?
            """), arguments: [token, now]).map { DeadToken(provider: $0[0], reason: $0[1], message: $0[2], markedAt: $0[3], expiresAt: $0[4]) }
    }

    /// Records how a delivery ended, in one group-committed transaction: the delivery log row, the dead-token mark
    /// (if the provider said the token is dead), and for a failed counted delivery its reserved slot turned into an error.
    /// Returns the reservation's day counters afterwards (unchanged for a success).
    public func complete(_ reservation: QuotaReservation?, record: DeliveryRecord, markDead: DeadMark? = nil) async throws -> UsageCounters? {
        let failedCounted = reservation != nil && record.outcome != "delivered"
        let ledger = database.ledger
        return try await database.batcher.write { db in
            try Self.insertLog(db, record, day: reservation?.day ?? UTCDay(record.at))
            if let m = markDead {
                try Self.insertDead(db, ledger, token: record.pushToken, mark: m, now: record.at)
            }
            guard let reservation else { return nil }
            guard failedCounted else { return reservation.decision.counters }
            // The slot moves from successful to errors with a relative update: the row must hold everything first.
            try ledger.fold(db, token: reservation.pushToken)
            let row = try Row.fetchOne(db.cachedStatement(sql: """
                UPDATE daily_usage SET successful = max(successful - 1, 0), errors = errors + 1, updated_at = ?
                WHERE day = ? AND push_token = ?
                RETURNING attempts, successful, errors
                """), arguments: [ISO8601UTC.string(record.at), reservation.day.description, reservation.pushToken])
            guard let row else { return nil }
            let counters = UsageCounters(attempts: row[0], successful: row[1], errors: row[2])
            ledger.relativelyUpdated(token: reservation.pushToken, day: reservation.day.description, counters: counters)
            return counters
        }
    }

    /// Logs a successful delivery without waiting for the commit: the counters were already committed with the
    /// reservation, so only the log row is at stake. Reads through this store (`recentDeliveries`) flush first.
    public func recordDelivered(_ record: DeliveryRecord, day: UTCDay, onError: @escaping @Sendable (any Error) -> Void) {
        database.batcher.enqueue({ db in try Self.insertLog(db, record, day: day) }, onError: onError)
    }

    /// Folds every delivery still counted only by its log row into `daily_usage` now (the writer does it by itself
    /// about once a second under load, and when the database closes). Returns after the commit.
    public func foldPending() async throws {
        let ledger = database.ledger
        try await database.batcher.write { db in
            try ledger.foldAll(db)
        }
    }

    /// Waits until every queued write has committed.
    public func flush() async throws {
        try await database.batcher.flush()
    }

    /// Logs a delivery that touched no counter (exempt notifications, the rate-limit notice).
    public func log(_ record: DeliveryRecord) async throws {
        _ = try await complete(nil, record: record)
    }

    /// The token's `rateLimits` for a day, read-only. Read by the writer in the next group commit, from its ledger
    /// (UsageLedger: the exact count includes deliveries not yet folded into `daily_usage`). A batch of reads only
    /// answers at its commit and adds no fsync; for an answer that follows a write of the same request (a local
    /// delivery's stored message) it also costs no hop to the reader pool (measured ~9% of the server's CPU per local
    /// delivery at 16 posters).
    public func rateLimits(pushToken: String, appID: String?, day: UTCDay, policy: QuotaPolicy) async throws -> RateLimits {
        let ledger = database.ledger
        return try await database.batcher.write { db in
            let usage = try ledger.usage(db, token: pushToken, day: day.description)
            // checkRateLimits carries no app id: use the one the token last posted with, for app limits.
            let app = try appID ?? usage.appID ?? String.fetchOne(db.cachedStatement(sql: TokenDays.latest("app_id")), arguments: [pushToken])
            return RateLimits(counters: usage.counters, maximum: policy.maximum(appID: app, override: usage.override), day: day)
        }
    }

    /// Inserts a delivery-log row and returns its id. `pendingUsage`: the row also counts the delivery in the quota,
    /// until the ledger folds it into `daily_usage` (UsageLedger).
    @discardableResult
    private static func insertLog(_ db: Database, _ r: DeliveryRecord, day: UTCDay, pendingUsage: Bool = false) throws -> Int64 {
        var insert = try RawStatement(db, sql: """
            INSERT INTO delivery_log (at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload, pending_usage)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(ISO8601UTC.string(r.at))
        insert.bind(day.description)
        insert.bind(r.pushToken)
        insert.bind(r.appID)
        insert.bind(r.platform)
        insert.bind(r.provider)
        insert.bind(r.kind)
        insert.bind(r.counted)
        insert.bind(r.outcome)
        insert.bind(r.messageID)
        insert.bind(r.errorMessage)
        insert.bind(r.payload)
        insert.bind(pendingUsage)
        try insert.execute()
        return db.lastInsertedRowID
    }

    // MARK: Admin

    /// Usage for one day, busiest tokens first.
    public func list(day: UTCDay, top: Int?) async throws -> [UsageRow] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.notice_sent, l.daily_limit, u.updated_at
                FROM daily_usage_current u LEFT JOIN token_limits l ON l.push_token = u.push_token
                WHERE u.day = ? ORDER BY u.successful + u.errors DESC, u.attempts DESC, u.push_token LIMIT ?
                """, arguments: [day.description, top ?? -1]).map(Self.usageRow)
        }
    }

    /// The token's recent days (newest first) and its override.
    public func history(pushToken: String, days: Int = 30) async throws -> (rows: [UsageRow], limitOverride: Int?) {
        try await pool.read { db in
            let rows = try Row.fetchAll(db, sql: """
                \(TokenDays.cte)
                SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.notice_sent, l.daily_limit, u.updated_at
                FROM days CROSS JOIN daily_usage_current u ON u.day = days.day AND u.push_token = ?1
                LEFT JOIN token_limits l ON l.push_token = u.push_token
                ORDER BY u.day DESC LIMIT ?2
                """, arguments: [pushToken, days]).map(Self.usageRow)
            let override = try Int.fetchOne(db, sql: "SELECT daily_limit FROM token_limits WHERE push_token = ?", arguments: [pushToken])
            return (rows, override)
        }
    }

    /// Sets a per-token limit override (takes effect on the next request).
    public func setLimit(pushToken: String, limit: Int, now: Date = Date()) async throws {
        let ledger = database.ledger
        try await database.batcher.write { db in
            ledger.metadataChanged(token: pushToken)
            try db.execute(sql: """
                INSERT INTO token_limits (push_token, daily_limit, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (push_token) DO UPDATE SET daily_limit = excluded.daily_limit, updated_at = excluded.updated_at
                """, arguments: [pushToken, limit, ISO8601UTC.string(now)])
        }
    }

    /// Removes a per-token override. Returns whether one existed.
    @discardableResult
    public func clearLimit(pushToken: String) async throws -> Bool {
        let ledger = database.ledger
        return try await database.batcher.write { db in
            ledger.metadataChanged(token: pushToken)
            try db.execute(sql: "DELETE FROM token_limits WHERE push_token = ?", arguments: [pushToken])
            return db.changesCount > 0
        }
    }

    /// Deletes the token's counters for a day (the notice may be sent again that day). Returns whether a row existed.
    @discardableResult
    public func reset(pushToken: String, day: UTCDay) async throws -> Bool {
        let ledger = database.ledger
        return try await database.batcher.write { db in
            // Deleting a row: every pending count goes to its row first (and the ledger starts afresh).
            try ledger.foldAndForget(db)
            try db.execute(sql: "DELETE FROM daily_usage WHERE day = ? AND push_token = ?", arguments: [day.description, pushToken])
            return db.changesCount > 0
        }
    }

    /// How many log rows past the first kept one pruning also checks for older days.
    static let pruneLookahead = 10_000

    /// Deletes usage and delivery-log days older than `retentionDays` before `today`. Returns rows deleted.
    @discardableResult
    public func prune(today: UTCDay, retentionDays: Int) async throws -> Int {
        let cutoff = today.adding(days: -Int64(max(retentionDays, 0))).description
        let ledger = database.ledger
        return try await database.batcher.write { db in
            try ledger.foldAndForget(db)
            try db.execute(sql: "DELETE FROM daily_usage WHERE day < ?", arguments: [cutoff])
            var n = db.changesCount
            // The log has no index on day: it is appended in time order, so everything before its first row of a
            // kept day is older. Rows logged late (a delivery that finished after midnight) are caught by a bounded
            // look past that boundary.
            try db.execute(sql: """
                DELETE FROM delivery_log WHERE id < coalesce(
                    (SELECT id FROM delivery_log WHERE day >= ?1 ORDER BY id LIMIT 1), (SELECT max(id) + 1 FROM delivery_log))
                """, arguments: [cutoff])
            n += db.changesCount
            try db.execute(sql: """
                DELETE FROM delivery_log WHERE id < (SELECT min(id) + ?2 FROM delivery_log) AND day < ?1
                """, arguments: [cutoff, Self.pruneLookahead])
            n += db.changesCount
            try db.execute(sql: "DELETE FROM dead_tokens WHERE expires_at <= ?", arguments: [ISO8601UTC.string(today.start)])
            n += db.changesCount
            return n
        }
    }

    /// Recent delivery log rows (newest first), for tests, the CLI and the admin API.
    public func recentDeliveries(pushToken: String? = nil, limit: Int = 100) async throws -> [LoggedDelivery] {
        try await flush()
        return try await pool.read { db in
            let sql = """
                SELECT id, at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload
                FROM delivery_log \(pushToken == nil ? "" : "WHERE push_token = ?") ORDER BY id DESC LIMIT ?
                """
            let args: StatementArguments = pushToken.map { [$0, limit] } ?? [limit]
            return try Row.fetchAll(db, sql: sql, arguments: args).map { r in
                LoggedDelivery(id: r[0], at: r[1], day: r[2], pushToken: r[3], appID: r[4], platform: r[5], provider: r[6], kind: r[7],
                               counted: (r[8] as Int) != 0, outcome: r[9], messageID: r[10], errorMessage: r[11], payload: r[12])
            }
        }
    }

    private static func usageRow(_ r: Row) -> UsageRow {
        UsageRow(day: r[0], pushToken: r[1], appID: r[2], attempts: r[3], successful: r[4], errors: r[5],
                 noticeSent: (r[6] as Int) != 0, limitOverride: r[7], updatedAt: r[8])
    }
}
