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

    /// Stores `binding`, replacing the token's former webhook id and the webhook id's former token. Returns the pairs
    /// it replaced (empty when the pair was stored already). `whileWriting` runs inside the transaction, in commit
    /// order with every other binding write, with the replaced pairs: callers keep caches in step there.
    public func bind(
        _ binding: PushChannelBinding,
        now: Date,
        whileWriting: @escaping @Sendable ([PushChannelBinding]) -> Void = { _ in }
    ) async throws -> [PushChannelBinding] {
        try await database.batcher.write { db in
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
                try db.cachedStatement(sql: "INSERT INTO channel_bindings (push_token, webhook_id, bound_at) VALUES (?, ?, ?)")
                    .execute(arguments: [binding.pushToken, binding.webhookID, ISO8601UTC.string(now)])
            }
            whileWriting(former)
            return former
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
