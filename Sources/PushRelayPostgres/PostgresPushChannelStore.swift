import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// PostgreSQL side of the push channel: channel tokens (stored as SHA-256 digests), messages owed to devices,
/// push-channel counters and the push-token ↔ webhook-id bindings.
public final class PostgresPushChannelStore: PushChannelStorage {
    let engine: PostgresStorageEngine
    /// A message's writes run in the order they were asked for (a save queued without waiting, then its delete).
    private let order = KeyedWriteOrder()
    private let binds: StatementBatcher<BindRequest, [PushChannelBinding]>

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
        // Two batches at a time at most: a batch holds its pairs' locks until it commits, so more would mostly wait.
        binds = StatementBatcher(
            maxBatch: Self.maxBindBatch,
            maxRunning: engine.batchesAtOnce(atMost: 2),
            batchable: { $0.batchable }
        ) { requests in
            try await Self.bind(requests, on: engine)
        }
    }

    // MARK: Tokens

    public func createToken(webhookID: String, label: String?, now: Date) async throws -> (token: String, id: Int64) {
        let token = "prc_" + RandomSecret.base64URL(bytes: 32)
        let hash = PostgresRows.digest(token)
        let stamp = ISO8601UTC.string(now)
        let rows = try await engine.rows(
            """
            INSERT INTO channel_tokens (webhook_id, token_hash, label, created_at) VALUES (\(webhookID), \(hash), \(label), \(stamp))
            RETURNING id
            """,
            write: true
        )
        return (token, try rows.first?.decode(Int64.self) ?? 0)
    }

    /// Looked up by digest: the comparison never touches the secret itself.
    public func webhookID(forChannelToken token: String) async throws -> String? {
        let hash = PostgresRows.digest(token)
        return try await engine.rows(
            "SELECT webhook_id FROM channel_tokens WHERE token_hash = \(hash) AND revoked_at IS NULL",
            write: false
        ).first?.decode(String.self)
    }

    public func revokeToken(id: Int64, now: Date) async throws -> Bool {
        let stamp = ISO8601UTC.string(now)
        return try await engine.changes("UPDATE channel_tokens SET revoked_at = \(stamp) WHERE id = \(id) AND revoked_at IS NULL RETURNING 1") > 0
    }

    public func listTokens() async throws -> [PushChannelTokenInfo] {
        try await engine.rows("SELECT id, webhook_id, label, created_at, revoked_at FROM channel_tokens ORDER BY id", write: false).map {
            let (id, webhook, label, created, revoked) = try $0.decode((Int64, String, String?, String, String?).self)
            return PushChannelTokenInfo(id: id, webhookID: webhook, label: label, createdAt: created, revokedAt: revoked)
        }
    }

    // MARK: Messages

    public func save(_ m: PushChannelMessage, count: PushChannelCounter?) async throws {
        try await enqueueSave(m, count: count).value
    }

    public func enqueueSave(_ m: PushChannelMessage, count: PushChannelCounter?) -> WriteTicket<Void> {
        let engine = self.engine
        let logger = engine.logger
        let upsert = Self.upsert(m, owner: engine.instanceID)
        let bump = count.map { Self.bump($0, token: m.pushToken, at: m.createdAt) }
        return order.submit(key: m.id) {
            if let bump {
                try await engine.transaction { connection in
                    _ = try await connection.query(upsert, logger: logger).collect()
                    _ = try await connection.query(bump, logger: logger).collect()
                }
            } else {
                try await engine.rows(upsert, write: true)
            }
        }
    }

    @discardableResult
    public func remove(id: String, count: PushChannelCounter?, token: String?, now: Date) async throws -> Bool {
        let engine = self.engine
        let logger = engine.logger
        let bump: PostgresQuery? = if let count, let token { Self.bump(count, token: token, at: now) } else { nil }
        return try await order.run(key: id) {
            guard let bump else { return try await engine.changes("DELETE FROM channel_messages WHERE id = \(id) RETURNING 1") > 0 }
            return try await engine.transaction { connection in
                let existed = try await connection.query("DELETE FROM channel_messages WHERE id = \(id) RETURNING 1", logger: logger).collect()
                _ = try await connection.query(bump, logger: logger).collect()
                return !existed.isEmpty
            }
        }
    }

    @discardableResult
    public func count(_ counter: PushChannelCounter, token: String, now: Date) -> WriteTicket<Void> {
        let engine = self.engine
        let bump = Self.bump(counter, token: token, at: now)
        let ticket = WriteTicket<Void>()
        engine.inFlight.start {
            do {
                try await engine.rows(bump, write: true)
                ticket.complete(.success(()))
            } catch {
                ticket.complete(.failure(error))
            }
        }
        return ticket
    }

    public func pending(webhookID: String?, pushToken: String?) async throws -> [PushChannelMessage] {
        if let pushToken {
            return try await engine.rows("\(unescaped: Self.select) WHERE push_token = \(pushToken) ORDER BY created_at", write: false)
                .compactMap { try? Self.message($0) }
        }
        let webhook = webhookID ?? ""
        return try await engine.rows("\(unescaped: Self.select) WHERE webhook_id = \(webhook) ORDER BY created_at", write: false)
            .compactMap { try? Self.message($0) }
    }

    public func all() async throws -> [PushChannelMessage] {
        try await engine.rows("\(unescaped: Self.select) ORDER BY created_at", write: false).compactMap { try? Self.message($0) }
    }

    /// Deletes the messages expired at `now`, counting each as dropped for its token and day.
    public func dropExpired(now: Date) async throws -> Int {
        let stamp = ISO8601UTC.string(now)
        let day = UTCDay(now).description
        // One statement: the deletes and their counts commit together.
        let rows = try await engine.rows(
            """
            WITH gone AS (DELETE FROM channel_messages WHERE expires_at <= \(stamp) RETURNING push_token),
            counted AS (
                INSERT INTO daily_usage AS u (day, push_token, local_dropped, updated_at)
                SELECT \(day), push_token, count(*), \(stamp) FROM gone GROUP BY push_token
                ON CONFLICT (day, push_token) DO UPDATE SET local_dropped = u.local_dropped + excluded.local_dropped,
                    updated_at = excluded.updated_at
            )
            SELECT count(*) FROM gone
            """,
            write: true
        )
        return try rows.first?.decode(Int.self) ?? 0
    }

    public func counters(pushToken: String, day: UTCDay) async throws -> (delivered: Int, fallbacks: Int, dropped: Int) {
        let dayKey = day.description
        let rows = try await engine.rows(
            "SELECT local_delivered, local_fallbacks, local_dropped FROM daily_usage WHERE day = \(dayKey) AND push_token = \(pushToken)",
            write: false
        )
        guard let row = rows.first else { return (0, 0, 0) }
        let (d, f, x) = try row.decode((Int, Int, Int).self)
        return (d, f, x)
    }

    /// How many messages are stored for `pushToken` (the `push_token` index answers).
    public func storedCount(pushToken: String) async throws -> Int {
        let rows = try await engine.rows("SELECT count(*) FROM channel_messages WHERE push_token = \(pushToken)", write: false)
        return try rows.first?.decode(Int.self) ?? 0
    }

    /// The UTF-8 bytes of every stored notification (a scan of the table; `octet_length` reads a stored value's size
    /// without decompressing it).
    public func storedBytes() async throws -> Int {
        let rows = try await engine.rows("SELECT COALESCE(SUM(octet_length(notification)), 0)::bigint FROM channel_messages", write: false)
        return try rows.first?.decode(Int.self) ?? 0
    }

    // MARK: Bindings

    public func binding(pushToken: String?, webhookID: String?) async throws -> PushChannelBinding? {
        let rows: [PostgresRow]
        if let pushToken {
            rows = try await engine.rows("SELECT push_token, webhook_id FROM channel_bindings WHERE push_token = \(pushToken)", write: false)
        } else if let webhookID {
            rows = try await engine.rows("SELECT push_token, webhook_id FROM channel_bindings WHERE webhook_id = \(webhookID)", write: false)
        } else {
            return nil
        }
        return try rows.first.map(Self.binding)
    }

    /// Written in a batch with the binds made meanwhile (`StatementBatcher`): one transaction of one statement
    /// (`pushrelay_bind_many`, migration 013), three round trips with BEGIN and COMMIT for the whole batch. The
    /// function first locks both sides of every pair (transaction-scoped advisory locks, held until COMMIT: a
    /// token's and a webhook id's bindings are written one at a time, across instances), then binds the pairs in
    /// arrival order, so the pairs each replaces and `whileWriting`, which runs for each in that order before the
    /// COMMIT, follow commit order. A pair whose strings PostgreSQL text cannot hold (NUL) is written alone, so its
    /// error is its own.
    public func bind(
        _ binding: PushChannelBinding,
        now: Date,
        whileWriting: @escaping @Sendable ([PushChannelBinding]) -> Void
    ) async throws -> [PushChannelBinding] {
        guard binding.isWithinLimits else { throw PushChannelBinding.TooLong(binding) }
        return try await binds.submit(BindRequest(binding: binding, stamp: ISO8601UTC.string(now), whileWriting: whileWriting))
    }

    struct BindRequest: Sendable {
        var binding: PushChannelBinding
        var stamp: String
        var whileWriting: @Sendable ([PushChannelBinding]) -> Void

        var batchable: Bool { PostgresText.canHold(binding.pushToken, binding.webhookID) }
    }

    /// Pairs per statement (three arrays: the statement's size does not grow with the batch).
    static let maxBindBatch = 256

    /// Binds `requests` in order in one transaction; the pairs each replaced, in order.
    static func bind(_ requests: [BindRequest], on engine: PostgresStorageEngine) async throws -> [[PushChannelBinding]] {
        let statement = BindStatement(requests: requests)
        let logger = engine.logger
        return try await engine.transaction { connection in
            var former = [[PushChannelBinding]](repeating: [], count: requests.count)
            for try await (idx, replaced) in try await connection.execute(statement, logger: logger) {
                guard former.indices.contains(idx - 1) else { continue }
                former[idx - 1].append(replaced)
            }
            for (request, replaced) in zip(requests, former) { request.whileWriting(replaced) }
            return former
        }
    }

    /// `pushrelay_bind_many` for a batch: the pairs each request replaced, by its position (1-based). Prepared once
    /// per connection.
    struct BindStatement: PostgresPreparedStatement {
        typealias Row = (Int, PushChannelBinding)

        static let name = "pushrelay_bind_many_v1"
        static let sql = "SELECT idx, former_token, former_webhook FROM pushrelay_bind_many($1, $2, $3)"

        var requests: [BindRequest]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings(capacity: 3)
            binds.append(requests.map(\.binding.pushToken))
            binds.append(requests.map(\.binding.webhookID))
            binds.append(requests.map(\.stamp))
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (idx, token, webhook) = try row.decode((Int, String, String).self)
            return (idx, PushChannelBinding(pushToken: token, webhookID: webhook))
        }
    }

    public func bindings() async throws -> [PushChannelBinding] {
        try await engine.rows("SELECT push_token, webhook_id FROM channel_bindings ORDER BY bound_at, push_token", write: false)
            .map(Self.binding)
    }

    public func pruneBindings(notSentSince cutoff: Date, limit: Int) async throws -> Int {
        let stamp = ISO8601UTC.string(cutoff)
        let limit = max(limit, 0)
        let rows = try await engine.rows(
            """
            WITH d AS (DELETE FROM channel_bindings WHERE push_token IN
                (SELECT push_token FROM channel_bindings WHERE coalesce(seen_at, bound_at) < \(stamp)
                 ORDER BY coalesce(seen_at, bound_at) LIMIT \(limit))
                RETURNING 1)
            SELECT count(*) FROM d
            """,
            write: true
        )
        return try rows.first?.decode(Int.self) ?? 0
    }

    @discardableResult
    public func refresh(_ binding: PushChannelBinding, now: Date) async throws -> Bool {
        guard binding.isWithinLimits, PostgresText.canHold(binding.pushToken, binding.webhookID) else { return false }
        let stamp = ISO8601UTC.string(now)
        let rows = try await engine.rows(
            """
            WITH u AS (UPDATE channel_bindings SET seen_at = \(stamp)
                WHERE push_token = \(binding.pushToken) AND webhook_id = \(binding.webhookID) RETURNING 1)
            SELECT count(*) FROM u
            """,
            write: true
        )
        return try (rows.first?.decode(Int.self) ?? 0) > 0
    }

    // MARK: Rows

    static let select =
        "SELECT id, webhook_id, push_token, platform, notification, state, fallback, created_at, expires_at FROM channel_messages"

    /// An unconfirmed message is owned by the instance that stored it (its confirm timer runs there).
    private static func upsert(_ m: PushChannelMessage, owner: String) -> PostgresQuery {
        let ownerInstance: String? = m.state == .unconfirmed ? owner : nil
        let platform = m.platform.rawValue
        let notification = m.notification.jsonString()
        let state = m.state.rawValue
        let fallback = m.fallback ? 1 : 0
        let created = ISO8601UTC.string(m.createdAt)
        let expires = ISO8601UTC.string(m.expiresAt)
        return """
            INSERT INTO channel_messages
                (id, webhook_id, push_token, platform, notification, state, fallback, created_at, expires_at, owner_instance)
            VALUES (\(m.id), \(m.webhookID), \(m.pushToken), \(platform), \(notification), \(state), \(fallback), \(created), \(expires),
                \(ownerInstance))
            ON CONFLICT (id) DO UPDATE SET state = excluded.state, fallback = excluded.fallback, webhook_id = excluded.webhook_id,
                owner_instance = excluded.owner_instance
            """
    }

    private static func bump(_ counter: PushChannelCounter, token: String, at: Date) -> PostgresQuery {
        let day = UTCDay(at).description
        let stamp = ISO8601UTC.string(at)
        let column = counter.rawValue
        return """
            INSERT INTO daily_usage AS u (day, push_token, \(unescaped: column), updated_at) VALUES (\(day), \(token), 1, \(stamp))
            ON CONFLICT (day, push_token) DO UPDATE SET \(unescaped: column) = u.\(unescaped: column) + 1, updated_at = excluded.updated_at
            """
    }

    static func message(_ row: PostgresRow) throws -> PushChannelMessage {
        let (id, webhook, token, platform, notification, state, fallback, created, expires) = try row.decode(
            (String, String, String, String, String, String, Int, String, String).self
        )
        return try PushChannelMessage.reading(
            id: id,
            webhookID: webhook,
            pushToken: token,
            platform: platform,
            notification: notification,
            state: state,
            fallback: fallback != 0,
            createdAt: created,
            expiresAt: expires
        )
    }

    private static func binding(_ row: PostgresRow) throws -> PushChannelBinding {
        let (token, webhook) = try row.decode((String, String).self)
        return PushChannelBinding(pushToken: token, webhookID: webhook)
    }
}
