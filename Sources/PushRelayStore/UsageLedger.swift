import Foundation
import GRDB
import GRDBSQLite
import PushRelayCore

/// The writer's copy of the quota counters of the tokens it served, and the write-behind of `daily_usage`.
///
/// A sandbox delivery is counted by its delivery-log row alone (`pending_usage = 1`, written in the request's own
/// group commit) and by this ledger; the token's `daily_usage` row is brought up to date later, in bulk. The requests
/// of a batch hit random tokens, so updating each row in place dirtied one random B-tree page per request: one WAL
/// frame, later copied back by the checkpoint. Folded about once a second in key order, a run of tokens shares pages.
///
/// Invariants (see migrations/007_usage_journal.sql):
/// - a `daily_usage` row holds every pending log row of its key with `id <= folded_log_id`;
/// - every pending log row with `id <= usage_fold.folded_through` is in its row;
/// - only a cached token can have pending rows, and a cached entry's `pending` counts exactly those not in its row.
/// So `entry.base` is what the row holds and `entry.current` is the exact count, and a token not cached has no pending
/// rows. Anything that deletes rows or writes them behind the ledger's back first folds the log (`foldLog`), and the
/// ledger forgets everything; another connection's commit (the CLI, `sqlite3`) is seen through `PRAGMA data_version`.
///
/// Only the writer connection touches it (inside the group commit's transactions), so it needs no lock.
final class UsageLedger: @unchecked Sendable {
    struct Entry {
        var day: String
        /// What the `daily_usage` row holds.
        var base: UsageCounters
        var noticeSent: Bool
        var appID: String?
        var webhookID: String?
        var override: Int?
        /// The token's `dead_tokens.expires_at`, if it has an entry there.
        var deadUntil: String?
        /// Delivered log rows not yet in the row, the newest of them, and the newest one's time.
        var pending = 0
        var lastPendingID: Int64 = 0
        var pendingStamp = ""

        var current: UsageCounters {
            UsageCounters(attempts: base.attempts + pending, successful: base.successful + pending, errors: base.errors)
        }
    }

    /// What the writer knows of a token's day before it decides.
    struct Usage {
        var counters: UsageCounters
        var noticeSent: Bool
        var override: Int? = nil
        var deadUntil: String? = nil
        /// Whether a `daily_usage` row exists (and is cached): only then can a delivery be counted by its log row.
        var cached: Bool
        var appID: String? = nil
        var webhookID: String? = nil
    }

    private var entries: [String: Entry] = [:]
    private var dirty: Set<String> = []
    /// Tokens whose override or dead-token mark changed: their entry's metadata is read again on next use.
    private var staleMeta: Set<String> = []
    private var dataVersion: Int?
    private var mustResync = true
    private var maxPendingID: Int64 = 0

    // The fold runs in rounds: the tokens dirty at the start of a round, in key order, a chunk per few jobs.
    private var round: [String] = []
    private var roundIndex = 0
    private var roundThrough: Int64 = 0
    private var nextRound: UInt64 = 0
    private var jobsSinceChunk = 0

    let foldInterval: UInt64
    let chunkSize: Int
    let jobsPerChunk: Int
    let maxEntries: Int

    init(foldInterval: Duration = .seconds(1), chunkSize: Int = 256, jobsPerChunk: Int = 16, maxEntries: Int = 200_000) {
        let (s, atto) = foldInterval.components
        self.foldInterval = UInt64(max(s, 0)) * 1_000_000_000 + UInt64(max(atto, 0) / 1_000_000_000)
        self.chunkSize = chunkSize
        self.jobsPerChunk = jobsPerChunk
        self.maxEntries = maxEntries
    }

    // MARK: Coherence

    /// Runs first in every group-commit transaction (WriteBatcher's `began`): if another connection committed since,
    /// fold the log and forget.
    func validate(_ db: Database) throws {
        let pragma = try RawStatement(db, sql: "PRAGMA data_version")
        let version = try pragma.firstRow { $0.int(0) }.flatMap { $0 } ?? 0
        if version != dataVersion || mustResync {
            try Self.foldLog(db)
            forgetAll()
            dataVersion = version
            mustResync = false
        }
    }

    /// A transaction that used the ledger did not commit: what the ledger learnt in it may be false. The next job
    /// folds the log and starts afresh.
    func resync() {
        mustResync = true
    }

    /// Folds every pending log row into `daily_usage` with SQL alone (no ledger needed: recovery after a crash, the CLI,
    /// another process's change) and moves `folded_through` to the newest log row. Idempotent.
    static func foldLog(_ db: Database) throws {
        guard try db.tableExists("usage_fold") else { return }
        try db.execute(sql: """
            UPDATE daily_usage SET attempts = daily_usage.attempts + c.pending, successful = daily_usage.successful + c.pending,
                folded_log_id = c.pending_last_id, updated_at = c.updated_at
            FROM daily_usage_current c
            WHERE c.pending > 0 AND daily_usage.day = c.day AND daily_usage.push_token = c.push_token;
            UPDATE usage_fold SET folded_through = (SELECT coalesce(max(id), 0) FROM delivery_log);
            """)
    }

    /// `foldLog` in a transaction of its own: when the database is opened (recovery) and closed.
    static func foldLogCommitted(_ db: Database) throws {
        try db.inTransaction {
            try foldLog(db)
            return .commit
        }
    }

    /// `foldLog`, then forget every entry: for writes that delete rows or change counters outside the ledger.
    func foldAndForget(_ db: Database) throws {
        try Self.foldLog(db)
        forgetAll()
    }

    private func forgetAll() {
        entries.removeAll(keepingCapacity: true)
        dirty.removeAll(keepingCapacity: true)
        staleMeta.removeAll()
        round.removeAll()
        roundIndex = 0
    }

    /// The token's override or dead-token mark changed (in this transaction): read them again on next use.
    func metadataChanged(token: String) {
        if entries[token] != nil { staleMeta.insert(token) }
    }

    // MARK: The request path

    /// The token's usage for `day`: from the ledger, or read from the database (and cached if a row exists).
    /// The request path hashes the token once per lookup and mutates entries in place (`entries.values[i]`): looked up,
    /// copied and stored back, each request's entry cost five hashes of its token and a retain of each of its strings.
    func usage(_ db: Database, token: String, day: String) throws -> Usage {
        if let i = entries.index(forKey: token) {
            if entries.values[i].day == day {
                if !staleMeta.isEmpty, staleMeta.remove(token) != nil {
                    let meta = try Self.read(db, token: token, day: day)
                    entries.values[i].override = meta.override
                    entries.values[i].deadUntil = meta.deadUntil
                }
                let e = entries.values[i]
                return Usage(counters: e.current, noticeSent: e.noticeSent, override: e.override, deadUntil: e.deadUntil,
                             cached: true, appID: e.appID, webhookID: e.webhookID)
            }
            // Another day (midnight passed): its pending rows go to that day's row first.
            try fold(db, token: token)
            entries[token] = nil
            staleMeta.remove(token)
        }
        let row = try Self.read(db, token: token, day: day)
        if row.cached {
            entries[token] = Entry(day: day, base: row.counters, noticeSent: row.noticeSent, appID: row.appID, webhookID: row.webhookID,
                                   override: row.override, deadUntil: row.deadUntil)
        }
        return row
    }

    /// A delivered request counted by its pending log row `id` (the token is cached, for that day).
    func countPending(token: String, id: Int64, stamp: String) {
        guard let i = entries.index(forKey: token) else { return resync() }  // `usage` cached it in this job; never happens
        entries.values[i].pending += 1
        entries.values[i].lastPendingID = id
        entries.values[i].pendingStamp = stamp
        dirty.insert(token)
        maxPendingID = max(maxPendingID, id)
    }

    /// The values the row was just given in place, from `before` (what `usage` answered). They include whatever was
    /// pending: the write set `folded_log_id` to `pendingThrough(token:)`.
    func stored(token: String, day: String, before: Usage, counters: UsageCounters, noticeSent: Bool, appID: String?, webhookID: String?) {
        var e = entries[token] ?? Entry(day: day, base: counters, noticeSent: noticeSent, appID: appID, webhookID: webhookID,
                                        override: before.override, deadUntil: before.deadUntil)
        e.day = day
        e.base = counters
        e.noticeSent = noticeSent
        e.appID = appID
        e.webhookID = webhookID
        e.pending = 0
        entries[token] = e
        dirty.remove(token)
    }

    /// The row was changed with a relative update (after `fold`), leaving `counters`.
    func relativelyUpdated(token: String, day: String, counters: UsageCounters) {
        guard var e = entries[token], e.day == day else { return }
        guard e.pending == 0 else { return resync() }  // callers fold first; should that change, start afresh
        e.base = counters
        entries[token] = e
    }

    /// The `folded_log_id` an in-place write of the token's row must set (0: nothing pending).
    func pendingThrough(token: String) -> Int64 {
        entries[token].map { $0.pending > 0 ? $0.lastPendingID : 0 } ?? 0
    }

    /// Writes the token's pending count into its row now (before a relative update of the row, or a day change).
    func fold(_ db: Database, token: String) throws {
        guard var e = entries[token], e.pending > 0 else { return }
        var update = try RawStatement(db, sql: """
            UPDATE daily_usage SET attempts = ?1, successful = ?2, folded_log_id = ?3, updated_at = max(updated_at, ?4)
            WHERE day = ?5 AND push_token = ?6
            """)
        let current = e.current
        update.bind(current.attempts)
        update.bind(current.successful)
        update.bind(Int(e.lastPendingID))
        update.bind(e.pendingStamp)
        update.bind(e.day)
        update.bind(token)
        try update.execute()
        e.base = current
        e.pending = 0
        entries[token] = e
        dirty.remove(token)
    }

    /// Called at the end of each request job: every `jobsPerChunk` jobs, folds the next chunk of the current round, or
    /// starts a round when one is due.
    func maybeFold(_ db: Database) throws {
        jobsSinceChunk += 1
        guard jobsSinceChunk >= jobsPerChunk else { return }
        jobsSinceChunk = 0
        if roundIndex >= round.count {
            let now = DispatchTime.now().uptimeNanoseconds
            guard !dirty.isEmpty, now >= nextRound else { return }
            if entries.count > maxEntries { entries = entries.filter { dirty.contains($0.key) } }
            startRound()
            nextRound = now + foldInterval
        }
        try foldChunk(db)
    }

    /// Folds everything pending now (`QuotaStore.foldPending`): the round under way, then one of what is left.
    func foldAll(_ db: Database) throws {
        repeat {
            if roundIndex >= round.count { startRound() }
            while roundIndex < round.count { try foldChunk(db, size: .max) }
        } while !dirty.isEmpty
    }

    /// Every pending row so far belongs to a token dirty now; once all of them are folded, the log is folded through
    /// the newest of those rows.
    private func startRound() {
        round = dirty.sorted()
        roundIndex = 0
        roundThrough = maxPendingID
    }

    private func foldChunk(_ db: Database, size: Int? = nil) throws {
        let end = min(round.count, roundIndex + (size ?? chunkSize))
        for token in round[roundIndex..<end] { try fold(db, token: token) }
        roundIndex = end
        if roundIndex >= round.count {
            round.removeAll(keepingCapacity: true)
            roundIndex = 0
            var update = try RawStatement(db, sql: "UPDATE usage_fold SET folded_through = max(folded_through, ?)")
            update.bind(Int(roundThrough))
            try update.execute()
        }
    }

    // MARK: Reading a row

    /// The token's row for `day` as the database holds it (`cached`: the row exists, so `usage` caches it).
    private static func read(_ db: Database, token: String, day: String) throws -> Usage {
        // One statement: the day's row (if any), the override (if any), and the dead-token mark (if any).
        var select = try RawStatement(db, sql: """
            SELECT u.attempts, u.successful, u.errors, u.notice_sent, (SELECT daily_limit FROM token_limits WHERE push_token = ?1),
                   (SELECT expires_at FROM dead_tokens WHERE push_token = ?1), u.app_id, u.webhook_id
            FROM (SELECT 1) LEFT JOIN daily_usage u ON u.day = ?2 AND u.push_token = ?1
            """)
        select.bind(token)
        select.bind(day)
        let row = try select.firstRow { c in
            Usage(counters: UsageCounters(attempts: c.int(0) ?? 0, successful: c.int(1) ?? 0, errors: c.int(2) ?? 0),
                  noticeSent: (c.int(3) ?? 0) != 0, override: c.int(4), deadUntil: c.text(5), cached: c.int(0) != nil,
                  appID: c.text(6), webhookID: c.text(7))
        }
        return row ?? Usage(counters: UsageCounters(), noticeSent: false, cached: false)
    }
}
