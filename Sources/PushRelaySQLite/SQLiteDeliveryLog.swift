import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

/// SQLite's delivery log and dead-token memory.
public final class SQLiteDeliveryLog: DeliveryLog {
    let database: PushRelayDatabase
    private var pool: DatabasePool { database.pool }

    public init(database: PushRelayDatabase) {
        self.database = database
    }

    public func deadToken(_ pushToken: String, now: Date) async throws -> DeadToken? {
        let stamp = ISO8601UTC.string(now)
        return try await pool.read { db in try SQLiteRows.deadToken(db, token: pushToken, now: stamp) }
    }

    public func markDead(_ pushToken: String, _ mark: DeadMark, now: Date) async throws {
        let cache = database.usageCache
        try await database.batcher.write { db in try SQLiteRows.insertDead(db, cache, token: pushToken, mark: mark, now: now) }
    }

    @discardableResult
    public func forgetDead(_ pushToken: String) async throws -> Bool {
        let cache = database.usageCache
        return try await database.batcher.write { db in
            try db.execute(sql: "DELETE FROM dead_tokens WHERE push_token = ?", arguments: [pushToken])
            cache.metadataChanged(token: pushToken)
            return db.changesCount > 0
        }
    }

    public func log(_ record: DeliveryRecord) async throws {
        try await database.batcher.write { db in try SQLiteRows.insertLog(db, record, day: UTCDay(record.at)) }
    }

    public func flush() async throws {
        try await database.batcher.flush()
    }

    public func recentDeliveries(pushToken: String?, limit: Int) async throws -> [LoggedDelivery] {
        try await flush()
        return try await pool.read { db in
            let sql = """
                SELECT id, at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload
                FROM delivery_log \(pushToken == nil ? "" : "WHERE push_token = ?") ORDER BY id DESC LIMIT ?
                """
            let args: StatementArguments = pushToken.map { [$0, limit] } ?? [limit]
            return try Row.fetchAll(db, sql: sql, arguments: args).map { r in
                try LoggedDelivery.reading(
                    id: r[0],
                    at: r[1],
                    day: r[2],
                    pushToken: r[3],
                    appID: r[4],
                    platform: r[5],
                    provider: r[6],
                    kind: r[7],
                    counted: (r[8] as Int) != 0,
                    outcome: r[9],
                    messageID: r[10],
                    errorMessage: r[11],
                    payload: r[12]
                )
            }
        }
    }
}
