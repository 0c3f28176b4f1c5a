import Foundation
import GRDB
import PushRelayCore
import PushRelayStore

extension SQLitePushChannelStore {
    /// The binding of a push token, or of a webhook id, if Home Assistant has shown one.
    public func binding(pushToken: String? = nil, webhookID: String? = nil) async throws -> PushChannelBinding? {
        try await pool.read { db in
            let row: Row?
            if let pushToken {
                row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT push_token, webhook_id FROM channel_bindings WHERE push_token = ?"),
                    arguments: [pushToken]
                )
            } else if let webhookID {
                row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT push_token, webhook_id FROM channel_bindings WHERE webhook_id = ?"),
                    arguments: [webhookID]
                )
            } else {
                row = nil
            }
            return row.map { PushChannelBinding(pushToken: $0[0], webhookID: $0[1]) }
        }
    }

    /// Stores `binding`, replacing the token's former webhook id and the webhook id's former token, and records `now`
    /// as when Home Assistant last sent it. Returns the pairs it replaced (empty when the pair was stored already).
    /// `whileWriting` runs inside the transaction, in commit order with every other binding write, with the replaced
    /// pairs: callers keep caches in step there. A pair past `FieldLimits` throws `PushChannelBinding.TooLong`.
    public func bind(
        _ binding: PushChannelBinding,
        now: Date,
        whileWriting: @escaping @Sendable ([PushChannelBinding]) -> Void = { _ in }
    ) async throws -> [PushChannelBinding] {
        guard binding.isWithinLimits else { throw PushChannelBinding.TooLong(binding) }
        let stamp = ISO8601UTC.string(now)
        return try await database.batcher.write { db in
            // Cached statements: a first notification of every device comes here, inside the group commit.
            let former = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT push_token, webhook_id FROM channel_bindings
                        WHERE (push_token = ?1 OR webhook_id = ?2) AND NOT (push_token = ?1 AND webhook_id = ?2)
                        """
                ),
                arguments: [binding.pushToken, binding.webhookID]
            ).map { PushChannelBinding(pushToken: $0[0], webhookID: $0[1]) }
            let stored =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM channel_bindings WHERE push_token = ? AND webhook_id = ?"),
                    arguments: [binding.pushToken, binding.webhookID]
                ) ?? false
            if !former.isEmpty || !stored {
                try db.cachedStatement(sql: "DELETE FROM channel_bindings WHERE push_token = ?1 OR webhook_id = ?2")
                    .execute(arguments: [binding.pushToken, binding.webhookID])
                try db.cachedStatement(sql: "INSERT INTO channel_bindings (push_token, webhook_id, bound_at, seen_at) VALUES (?1, ?2, ?3, ?3)")
                    .execute(arguments: [binding.pushToken, binding.webhookID, stamp])
            } else {
                try db.cachedStatement(sql: "UPDATE channel_bindings SET seen_at = ?2 WHERE push_token = ?1")
                    .execute(arguments: [binding.pushToken, stamp])
            }
            whileWriting(former)
            return former
        }
    }

    /// Records `now` as when Home Assistant last sent `binding`, if exactly that pair is stored. Returns whether it was.
    @discardableResult
    public func refresh(_ binding: PushChannelBinding, now: Date) async throws -> Bool {
        guard binding.isWithinLimits else { return false }
        let stamp = ISO8601UTC.string(now)
        return try await database.batcher.write { db in
            try db.cachedStatement(sql: "UPDATE channel_bindings SET seen_at = ?3 WHERE push_token = ?1 AND webhook_id = ?2")
                .execute(arguments: [binding.pushToken, binding.webhookID, stamp])
            return db.changesCount > 0
        }
    }

    /// Deletes at most `limit` bindings not sent since `cutoff`, by the index on when Home Assistant last sent each.
    public func pruneBindings(notSentSince cutoff: Date, limit: Int) async throws -> Int {
        let stamp = ISO8601UTC.string(cutoff)
        return try await database.batcher.write { db in
            try db.execute(
                sql: """
                    DELETE FROM channel_bindings WHERE push_token IN
                        (SELECT push_token FROM channel_bindings WHERE coalesce(seen_at, bound_at) < ?1
                         ORDER BY coalesce(seen_at, bound_at) LIMIT ?2)
                    """,
                arguments: [stamp, max(limit, 0)]
            )
            return db.changesCount
        }
    }

    /// Every binding (for the admin and for tests).
    public func bindings() async throws -> [PushChannelBinding] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT push_token, webhook_id FROM channel_bindings ORDER BY bound_at, push_token").map {
                PushChannelBinding(pushToken: $0[0], webhookID: $0[1])
            }
        }
    }
}
