import Foundation
import GRDB
import GRDBSQLite
import PushRelayCore
import PushRelayStore

/// The writer connection's copy of the quota rows of the tokens it served, so a reservation reads nothing.
///
/// Only the writer connection touches it, inside the group commit's transactions, so it needs no lock. It is a cache
/// of what the database holds, never the other way round: every reservation updates `daily_usage` in place, in the
/// same transaction. Another connection's commit (the CLI, `sqlite3`, another process) is seen through
/// `PRAGMA data_version` at the start of the next transaction, and the cache starts afresh; so does a transaction that
/// rolled back.
final class SQLiteUsageCache: @unchecked Sendable {
    /// What the writer knows of a token's day before it decides.
    struct Usage {
        var counters: UsageCounters
        var noticeSent: Bool
        var override: Int? = nil
        /// The token's `dead_tokens.expires_at`, if it has an entry there.
        var deadUntil: String? = nil
        /// Whether a `daily_usage` row exists: the reservation then updates it instead of inserting one.
        var exists: Bool
        var appID: String? = nil
        var webhookID: String? = nil
    }

    private struct Entry {
        var day: String
        var usage: Usage
    }

    private var entries: [String: Entry] = [:]
    /// Tokens whose override or dead-token mark changed: their entry's metadata is read again on next use.
    private var staleMeta: Set<String> = []
    private var dataVersion: Int?
    private var mustResync = true
    let maxEntries: Int

    init(maxEntries: Int = 200_000) {
        self.maxEntries = maxEntries
    }

    /// Runs first in every group-commit transaction: if another connection committed since, start afresh.
    func validate(_ db: Database) throws {
        let pragma = try RawStatement(db, sql: "PRAGMA data_version")
        let version = try pragma.firstRow { $0.int(0) }.flatMap { $0 } ?? 0
        if version != dataVersion || mustResync {
            forgetAll()
            dataVersion = version
            mustResync = false
        }
    }

    /// A transaction that used the cache did not commit: what it learnt there may be false.
    func resync() {
        mustResync = true
    }

    /// Forgets everything: for writes that delete rows or change counters outside the cache.
    func forgetAll() {
        entries.removeAll(keepingCapacity: true)
        staleMeta.removeAll()
    }

    /// Forgets the entries of days before `day` (their rows were pruned).
    func forget(daysBefore day: String) {
        let old = entries.compactMap { $0.value.day < day ? $0.key : nil }
        for token in old { entries.removeValue(forKey: token) }
    }

    /// The token's override or dead-token mark changed (in this transaction): read them again on next use.
    func metadataChanged(token: String) {
        if entries[token] != nil { staleMeta.insert(token) }
    }

    /// The token's usage for `day`: from the cache, or read from the database.
    func usage(_ db: Database, token: String, day: String) throws -> Usage {
        if let i = entries.index(forKey: token), entries.values[i].day == day {
            if !staleMeta.isEmpty, staleMeta.remove(token) != nil {
                let meta = try Self.read(db, token: token, day: day)
                entries.values[i].usage.override = meta.override
                entries.values[i].usage.deadUntil = meta.deadUntil
            }
            return entries.values[i].usage
        }
        staleMeta.remove(token)
        let row = try Self.read(db, token: token, day: day)
        if entries.count >= maxEntries { entries.removeAll(keepingCapacity: true) }
        entries[token] = Entry(day: day, usage: row)
        return row
    }

    /// The row now holds these values (written in this transaction).
    func stored(token: String, day: String, counters: UsageCounters, noticeSent: Bool, appID: String?, webhookID: String?) {
        guard let i = entries.index(forKey: token), entries.values[i].day == day else { return }
        entries.values[i].usage.counters = counters
        entries.values[i].usage.noticeSent = noticeSent
        entries.values[i].usage.exists = true
        entries.values[i].usage.appID = appID
        entries.values[i].usage.webhookID = webhookID
    }

    /// The token's row for `day` as the database holds it.
    private static func read(_ db: Database, token: String, day: String) throws -> Usage {
        // One statement: the day's row (if any), the override (if any), and the dead-token mark (if any).
        var select = try RawStatement(
            db,
            sql: """
                SELECT u.attempts, u.successful, u.errors, u.notice_sent, (SELECT daily_limit FROM token_limits WHERE push_token = ?1),
                       (SELECT expires_at FROM dead_tokens WHERE push_token = ?1), u.app_id, u.webhook_id
                FROM (SELECT 1) LEFT JOIN daily_usage u ON u.day = ?2 AND u.push_token = ?1
                """
        )
        select.bind(token)
        select.bind(day)
        let row = try select.firstRow { c in
            Usage(
                counters: UsageCounters(attempts: c.int(0) ?? 0, successful: c.int(1) ?? 0, errors: c.int(2) ?? 0),
                noticeSent: (c.int(3) ?? 0) != 0,
                override: c.int(4),
                deadUntil: c.text(5),
                exists: c.int(0) != nil,
                appID: c.text(6),
                webhookID: c.text(7)
            )
        }
        return row ?? Usage(counters: UsageCounters(), noticeSent: false, exists: false)
    }
}
