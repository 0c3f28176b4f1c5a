import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// PostgreSQL's quota ledger. Each reservation is one conditional upsert: PostgreSQL takes the row lock, decides from
/// the row's latest committed counters and the token's override (`QuotaDecision.decide`, written in SQL:
/// `ReservationBatcher.Statement`), and returns the decision, so any number of connections and instances agree
/// (exactly `maximum` allowed per token and UTC day, the notice once).
public final class PostgresQuotaLedger: QuotaLedger {
    let engine: PostgresStorageEngine
    private let deliveredLog: DeliveredLogWriter
    private let reservations: ReservationBatcher

    public init(engine: PostgresStorageEngine) {
        self.engine = engine
        self.deliveredLog = DeliveredLogWriter(engine: engine)
        self.reservations = ReservationBatcher(engine: engine, maxRunning: engine.batchesAtOnce(atMost: 4))
    }

    public func reserveUnlessDead(
        pushToken: String,
        appID: String?,
        webhookID: String?,
        day: UTCDay,
        policy: QuotaPolicy,
        now: Date,
        checkDead: Bool
    ) async throws -> ReserveResult {
        let dayKey = day.description
        let stamp = ISO8601UTC.string(now)
        // The policy's limit for this request's app; the token's override, read in the statement, wins over it.
        let policyMaximum = policy.maximum(appID: appID, override: nil)
        // Decided in a batch with the reservations that arrive meanwhile (`ReservationBatcher`); a token with a live
        // dead-token mark gets no row there and is answered below.
        let request = ReservationBatcher.Request(
            day: day,
            pushToken: pushToken,
            appID: appID,
            webhookID: webhookID,
            policyMaximum: policyMaximum,
            checkDead: checkDead,
            stamp: stamp
        )
        if let row = try await reservations.reserve(request) {
            return .reserved(Self.reservation(row, day: day, pushToken: pushToken))
        }
        // Twice at most: a dead mark that expired or was forgotten between the upsert and the read is retried.
        for _ in 0..<2 {
            // The batch statement for this request alone; it writes nothing when `checkDead` finds a live mark.
            if let row = try await ReservationBatcher.decide([request], on: engine)[0] {
                return .reserved(Self.reservation(row, day: day, pushToken: pushToken))
            }
            // Dead: read the mark and the day's counters (nothing was counted).
            let found = try await engine.rows(
                """
                SELECT d.provider, d.reason, d.message, d.marked_at, d.expires_at,
                    coalesce(u.attempts, 0), coalesce(u.successful, 0), coalesce(u.errors, 0),
                    coalesce((SELECT daily_limit FROM token_limits WHERE push_token = \(pushToken)), \(policyMaximum))
                FROM dead_tokens d LEFT JOIN daily_usage u ON u.day = \(dayKey) AND u.push_token = d.push_token
                WHERE d.push_token = \(pushToken) AND d.expires_at > \(stamp)
                """,
                write: false
            )
            if let row = found.first {
                let (provider, reason, message, marked, expires, attempts, successful, errors, maximum) = try row.decode(
                    (String, String, String?, String, String, Int, Int, Int, Int).self
                )
                let dead = DeadToken(provider: provider, reason: reason, message: message, markedAt: marked, expiresAt: expires)
                let counters = UsageCounters(attempts: attempts, successful: successful, errors: errors)
                return .dead(dead, RateLimits(counters: counters, maximum: maximum, day: day))
            }
        }
        throw PostgresStoreError.unavailable("a dead-token mark kept changing during a reservation")
    }

    /// The reservation a decided row stands for: PostgreSQL's decision, as the statement returned it.
    static func reservation(_ row: ReservationBatcher.Decided, day: UTCDay, pushToken: String) -> QuotaReservation {
        QuotaReservation(day: day, pushToken: pushToken, maximum: row.maximum, decision: row.decision)
    }

    public func complete(_ reservation: QuotaReservation?, record: DeliveryRecord, markDead: DeadMark?) async throws -> UsageCounters? {
        let failedCounted = reservation != nil && record.outcome != .delivered
        let logger = engine.logger
        let log = PostgresRows.insertLog(record, day: reservation?.day ?? UTCDay(record.at))
        let dead = markDead.map { PostgresRows.insertDead(token: record.pushToken, mark: $0, now: record.at) }
        guard let reservation, failedCounted else {
            if let dead {
                try await engine.transaction { connection in
                    _ = try await connection.query(log, logger: logger).collect()
                    _ = try await connection.query(dead, logger: logger).collect()
                }
            } else {
                try await engine.rows(log, write: true)
            }
            return reservation?.decision.counters
        }
        let stamp = ISO8601UTC.string(record.at)
        let dayKey = reservation.day.description
        let token = reservation.pushToken
        return try await engine.transaction { connection in
            _ = try await connection.query(log, logger: logger).collect()
            if let dead { _ = try await connection.query(dead, logger: logger).collect() }
            // The slot moves from successful to errors with a relative update.
            let rows = try await connection.query(
                """
                UPDATE daily_usage SET successful = greatest(successful - 1, 0), errors = errors + 1, updated_at = \(stamp)
                WHERE day = \(dayKey) AND push_token = \(token)
                RETURNING attempts, successful, errors
                """,
                logger: logger
            ).collect()
            guard let row = rows.first else { return nil }
            let (attempts, successful, errors) = try row.decode((Int, Int, Int).self)
            return UsageCounters(attempts: attempts, successful: successful, errors: errors)
        }
    }

    /// Batched with the other delivered records written meanwhile (`DeliveredLogWriter`).
    public func recordDelivered(_ record: DeliveryRecord, day: UTCDay, onError: @escaping @Sendable (any Error) -> Void) {
        deliveredLog.append(record, day: day, onError: onError)
    }

    /// One read: the day's counters, the override, and the app the token last posted with (for app limits).
    public func rateLimits(pushToken: String, appID: String?, day: UTCDay, policy: QuotaPolicy) async throws -> RateLimits {
        let dayKey = day.description
        let rows = try await engine.rows(
            """
            SELECT u.attempts, u.successful, u.errors, (SELECT daily_limit FROM token_limits WHERE push_token = \(pushToken)),
                coalesce(\(appID), u.app_id,
                    (SELECT app_id FROM daily_usage WHERE push_token = \(pushToken) AND app_id IS NOT NULL ORDER BY day DESC LIMIT 1))
            FROM (SELECT 1) one LEFT JOIN daily_usage u ON u.day = \(dayKey) AND u.push_token = \(pushToken)
            """,
            write: false
        )
        let (attempts, successful, errors, override, app) =
            try rows.first?.decode((Int?, Int?, Int?, Int?, String?).self) ?? (nil, nil, nil, nil, nil)
        let counters = UsageCounters(attempts: attempts ?? 0, successful: successful ?? 0, errors: errors ?? 0)
        return RateLimits(counters: counters, maximum: policy.maximum(appID: app, override: override), day: day)
    }
}
