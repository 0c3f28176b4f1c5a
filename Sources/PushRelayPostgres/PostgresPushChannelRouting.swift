import Foundation
import Logging
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// Push channels across instances on PostgreSQL: a heartbeat row per instance (`instances`), a presence row per
/// channel (`local_push_presence`), and `NOTIFY pushrelay_<instance>` with a message id to hand a stored message to
/// the instance holding the device's channel (a payload is never the message itself: NOTIFY carries 8000 bytes).
///
/// Liveness is judged by PostgreSQL's clock (`now()`), so instances' clocks need not agree.
public final class PostgresPushChannelRouting: PushChannelRouting {
    let engine: PostgresStorageEngine
    private let holders: StatementBatcher<HolderLookup, PushChannelHolder?>

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
        let instanceID = engine.instanceID
        holders = StatementBatcher(
            maxBatch: Self.maxHolderBatch,
            maxRunning: engine.batchesAtOnce(atMost: 4),
            batchable: { $0.batchable }
        ) { lookups in
            try await Self.holders(lookups, instanceID: instanceID, on: engine)
        }
    }

    public var instanceID: String { engine.instanceID }

    /// The NOTIFY channel of an instance (an identifier: `pushrelay_` and the instance id's hex).
    static func channel(of instance: String) -> String {
        "pushrelay_" + String(instance.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(40))
    }

    /// The NOTIFY channel every instance listens on for the others' presence claims (the payload: the claimer's id).
    static let presenceChannel = "pushrelay_presence"

    /// One statement: the heartbeat, then whether a live other instance has any presence row (by instance, on
    /// `local_push_presence_by_instance`: the live instances are few, the rows many).
    public func heartbeat(staleAfter: Duration) async throws -> Bool {
        let known = engine.plan.known
        let rows = try await engine.rows(
            """
            WITH beat AS (
                INSERT INTO instances (id, schema_known) VALUES (\(instanceID), \(known))
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), schema_known = excluded.schema_known RETURNING 1
            )
            SELECT EXISTS (
                SELECT 1 FROM instances i
                WHERE i.id <> \(instanceID) AND i.heartbeat_at > now() - make_interval(secs => \(Self.seconds(staleAfter)))
                    AND EXISTS (SELECT 1 FROM local_push_presence p WHERE p.instance_id = i.id)
            ) FROM beat
            """,
            write: true
        )
        return try rows.first?.decode(Bool.self) ?? true
    }

    public func claimPresence(webhookID: String, pushToken: String?, supportConfirm: Bool, fallback: Bool) async throws {
        try await engine.rows(
            """
            INSERT INTO local_push_presence (webhook_id, push_token, instance_id, support_confirm, fallback)
            VALUES (\(webhookID), \(pushToken), \(instanceID), \(supportConfirm), \(fallback))
            ON CONFLICT (webhook_id) DO UPDATE SET push_token = excluded.push_token, instance_id = excluded.instance_id,
                support_confirm = excluded.support_confirm, fallback = excluded.fallback, updated_at = now()
            RETURNING pg_notify(\(Self.presenceChannel), \(instanceID))
            """,
            write: true
        )
    }

    public func releasePresence(webhookID: String) async throws {
        try await engine.rows("DELETE FROM local_push_presence WHERE webhook_id = \(webhookID) AND instance_id = \(instanceID)", write: true)
    }

    /// Decided in a batch with the lookups that arrive meanwhile (every Home Assistant notification asks, so under
    /// load this is one statement for many notifications). A lookup whose strings PostgreSQL text cannot hold (NUL)
    /// runs alone, so its error is its own.
    public func holder(webhookID: String?, pushToken: String, staleAfter: Duration) async throws -> PushChannelHolder? {
        try await holders.submit(HolderLookup(webhookID: webhookID, pushToken: pushToken, staleAfter: Self.seconds(staleAfter)))
    }

    struct HolderLookup: Sendable {
        var webhookID: String?
        var pushToken: String
        var staleAfter: Double

        var batchable: Bool { PostgresText.canHold(pushToken, webhookID) }
    }

    /// Lookups per statement (three arrays: the statement's text does not grow with the batch).
    static let maxHolderBatch = 256

    /// The holder for each lookup, in order: one statement, one lateral lookup a request.
    static func holders(_ lookups: [HolderLookup], instanceID: String, on engine: PostgresStorageEngine) async throws -> [PushChannelHolder?] {
        var found = [PushChannelHolder?](repeating: nil, count: lookups.count)
        for (i, holder) in try await engine.execute(HolderStatement(instanceID: instanceID, lookups: lookups), write: false) {
            guard found.indices.contains(i - 1) else { continue }
            found[i - 1] = holder
        }
        return found
    }

    /// The lookups' columns as arrays, numbered by `unnest`'s ordinality; $1 is this instance's id. The same rule as a
    /// local channel's `accepts`: a webhook-id channel takes its webhook's notifications, a push-token channel only
    /// its token's; the webhook's own channel first, then the latest. Prepared once per connection.
    struct HolderStatement: PostgresPreparedStatement {
        typealias Row = (Int, PushChannelHolder)

        static let name = "pushrelay_holders_v1"

        static let sql = """
            SELECT r.i, h.instance_id, h.support_confirm, h.fallback
            FROM unnest($2::text[], $3::text[], $4::double precision[]) WITH ORDINALITY AS r (webhook_id, push_token, stale_after, i)
            CROSS JOIN LATERAL (
                SELECT p.instance_id, p.support_confirm, p.fallback FROM local_push_presence p JOIN instances i ON i.id = p.instance_id
                WHERE ((p.webhook_id = r.webhook_id AND (p.push_token IS NULL OR p.push_token = r.push_token)) OR p.push_token = r.push_token)
                    AND p.instance_id <> $1 AND i.heartbeat_at > now() - make_interval(secs => r.stale_after)
                ORDER BY (p.webhook_id = r.webhook_id) DESC NULLS LAST, p.updated_at DESC
                LIMIT 1
            ) h
            """

        var instanceID: String
        var lookups: [HolderLookup]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings(capacity: 4)
            binds.append(instanceID)
            binds.append(PostgresTextArray(lookups.map(\.webhookID)))
            binds.append(lookups.map(\.pushToken))
            binds.append(lookups.map(\.staleAfter))
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (i, instance, confirm, fallback) = try row.decode((Int, String, Bool, Bool).self)
            return (i, PushChannelHolder(instanceID: instance, supportConfirm: confirm, fallback: fallback))
        }
    }

    public func handOff(messageID: String, to instance: String) async throws {
        let channel = Self.channel(of: instance)
        try await engine.rows("SELECT pg_notify(\(channel), \(messageID))", write: true)
    }

    /// The first wait (on the engine's clock) before listening again after a listen ended: doubled after each listen
    /// that ended within `lastingListen`, up to `lastRetryDelay`.
    static let firstRetryDelay = Duration.milliseconds(100)
    /// The longest wait before listening again.
    static let lastRetryDelay = Duration.seconds(2)
    /// A listen that lasted this long (on the engine's clock) was no failure: the next wait is `firstRetryDelay`.
    static let lastingListen = Duration.seconds(10)

    /// What the other instances send this one, for as long as the stream is iterated: `.listening` once both LISTENs
    /// (this instance's hand-offs and everyone's presence claims) are established on one pooled connection, then what
    /// arrives, then `.stoppedListening` when the listen ends or fails (a lost connection, PostgreSQL restarting). It
    /// is started again after a backoff on the engine's clock. This instance's own presence claims are left out.
    public func events() -> AsyncStream<PushChannelRoutingEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PushChannelRoutingEvent.self)
        let engine = self.engine
        let instanceID = self.instanceID
        let channel = Self.channel(of: instanceID)
        let task = Task {
            var delay = Self.firstRetryDelay
            while !Task.isCancelled {
                // A listen that lasted was no failure to back off from.
                let lasted = Locked(false)
                let lasting = engine.clock.schedule(after: Self.lastingListen) { lasted.withLock { $0 = true } }
                let listened = Locked(false)
                do {
                    try await engine.client.withConnection { connection in
                        try await Self.listen(
                            handOffs: channel,
                            presence: Self.presenceChannel,
                            connection,
                            target: engine.target,
                            clock: engine.clock
                        ) { event in
                            switch event {
                            case .presenceClaimed(let claimer) where claimer == instanceID: return
                            case .listening: listened.withLock { $0 = true }
                            default: break
                            }
                            continuation.yield(event.routingEvent)
                        }
                    }
                } catch {
                    if !Task.isCancelled {
                        engine.logger.warning(
                            "listening for channel hand-offs failed; retrying",
                            metadata: ["error": .string("\(PostgresErrorMapping.map(error, target: engine.target))")]
                        )
                    }
                }
                if listened.withLock({ $0 }) { continuation.yield(.stoppedListening) }
                lasting.cancel()
                if lasted.withLock({ $0 }) { delay = Self.firstRetryDelay }
                // Throws at once when cancelled (shutdown).
                do { try await engine.clock.sleep(for: delay) } catch { break }
                delay = min(delay * 2, Self.lastRetryDelay)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// What one listen hears.
    private enum Heard: Sendable {
        case listening
        case handOff(String)
        case presenceClaimed(by: String)

        var routingEvent: PushChannelRoutingEvent {
            switch self {
            case .listening: .listening
            case .handOff(let id): .handOff(messageID: id)
            case .presenceClaimed: .presenceClaimed
            }
        }
    }

    /// Listens on both channels until either listen ends or fails, or the connection is seen closed; `.listening`
    /// once both LISTENs are answered. The pool can hand out a connection that closed a moment ago (after a PostgreSQL
    /// restart, say), and a LISTEN written to it would never be answered: the hand-offs would stop for good. So the
    /// connection is checked first and watched while it listens (`StatementWatch`, no limit); a listen that never
    /// ends on a closed connection is left behind.
    private static func listen(
        handOffs: String,
        presence: String,
        _ connection: PostgresConnection,
        target: String,
        clock: any TimePort,
        _ heard: @escaping @Sendable (Heard) -> Void
    ) async throws {
        let lost = PostgresStoreError.unavailable("the connection to \(target) was closed; listening again")
        guard !connection.isClosed else { throw lost }
        let ended = FirstResult<Result<Void, any Error>>()
        let listening = Task {
            ended.offer(
                await Result(catching: {
                    try await connection.listen(on: presence) { claims in
                        try await connection.listen(on: handOffs) { ids in
                            heard(.listening)
                            try await withThrowingTaskGroup(of: Void.self) { group in
                                group.addTask { for try await n in claims { heard(.presenceClaimed(by: n.payload)) } }
                                group.addTask { for try await n in ids { heard(.handOff(n.payload)) } }
                                // Either listen ending ends both.
                                try await group.next()
                                group.cancelAll()
                            }
                        }
                    }
                })
            )
        }
        let watch = StatementWatch(connection: connection, limit: nil, clock: clock) { _ in ended.offer(.failure(lost)) }
        defer { watch.stop() }
        // Cancelled (shutdown): the listen is cancelled and awaited, so that it ends with its UNLISTENs.
        try await withTaskCancellationHandler {
            await withCheckedContinuation { ended.start($0) }
        } onCancel: {
            listening.cancel()
        }.get()
    }

    public func message(id: String) async throws -> PushChannelMessage? {
        try await engine.rows("\(unescaped: PostgresPushChannelStore.select) WHERE id = \(id)", write: false).first.map(
            PostgresPushChannelStore.message
        )
    }

    public func orphanedMessages(staleAfter: Duration, limit: Int) async throws -> [PushChannelMessage] {
        let seconds = Self.seconds(staleAfter)
        return try await engine.rows(
            """
            \(unescaped: PostgresPushChannelStore.select) m
            WHERE m.state = 'unconfirmed' AND m.owner_instance IS DISTINCT FROM \(instanceID)
                AND NOT EXISTS (
                    SELECT 1 FROM instances i WHERE i.id = m.owner_instance AND i.heartbeat_at > now() - make_interval(secs => \(seconds))
                )
            ORDER BY m.created_at
            LIMIT \(limit)
            """,
            write: false
        ).map(PostgresPushChannelStore.message)
    }

    @discardableResult
    public func forgetDeadInstances(staleAfter: Duration) async throws -> Int {
        let seconds = Self.seconds(staleAfter)
        try await engine.rows(
            """
            DELETE FROM local_push_presence p WHERE NOT EXISTS (
                SELECT 1 FROM instances i WHERE i.id = p.instance_id AND i.heartbeat_at > now() - make_interval(secs => \(seconds))
            )
            """,
            write: true
        )
        // Instance rows are kept a while longer: an orphan's owner that has no row is dead as well.
        let forgotten = 10 * seconds
        return try await engine.changes(
            "DELETE FROM instances WHERE heartbeat_at < now() - make_interval(secs => \(forgotten)) RETURNING 1"
        )
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
