import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore

/// Quota reservations that arrive together, decided in one statement: one multi-row conditional upsert, one commit,
/// one pooled round trip for the whole batch instead of one each (`StatementBatcher`).
///
/// Each row of the batch is decided exactly as a lone reservation is (`PostgresQuotaLedger`): PostgreSQL takes the
/// row lock and decides from the row's latest committed counters and the token's override. A batch never holds two
/// requests for the same token and day (one statement cannot update a row twice): a second request for a key waits
/// for a later batch, so a hot token's requests are decided one after another, in arrival order, as before.
///
/// Every batch takes its rows' locks in one order (by day, then token, `ORDER BY` in the statement), so batches
/// running at once, on this instance or another, wait for each other instead of deadlocking.
///
/// A request whose row the statement did not write (a live dead-token mark) is answered nil, and the ledger decides
/// it alone; a failed batch fails each of its requests with the error, as a lone statement would.
final class ReservationBatcher: Sendable {
    struct Request: Sendable {
        var day: UTCDay
        var pushToken: String
        var appID: String?
        var webhookID: String?
        /// The policy's maximum for the request's app; the token's override, read in the statement, wins over it.
        var policyMaximum: Int
        var checkDead: Bool
        var stamp: String

        var key: String { "\(day.description) \(pushToken)" }

        /// PostgreSQL text cannot hold NUL; such a request is decided alone, so its error is its own.
        var batchable: Bool { PostgresText.canHold(pushToken, appID, webhookID) }
    }

    /// The decision the statement made and the maximum it applied.
    struct Decided: Sendable, Equatable {
        var decision: QuotaDecision
        var maximum: Int
    }

    /// Requests per statement (seven arrays: the statement's text does not grow with the batch).
    static let maxBatch = 256

    private let batcher: StatementBatcher<Request, Decided?>

    init(engine: PostgresStorageEngine, maxRunning: Int) {
        batcher = StatementBatcher(
            maxBatch: Self.maxBatch,
            maxRunning: maxRunning,
            conflictKey: { $0.key },
            batchable: { $0.batchable }
        ) { requests in
            try await Self.decide(requests, on: engine)
        }
    }

    /// The request's row as its batch left it; nil when the statement wrote no row for it (`checkDead` found a live
    /// mark).
    func reserve(_ request: Request) async throws -> Decided? {
        try await batcher.submit(request)
    }

    /// Runs the statement for `requests` (distinct keys) on `engine`: the decided row of each request, in order, nil
    /// for one whose row was not written (a live dead-token mark). The lone path of `PostgresQuotaLedger` runs it for
    /// one.
    static func decide(_ requests: [Request], on engine: PostgresStorageEngine) async throws -> [Decided?] {
        var decided = [Decided?](repeating: nil, count: requests.count)
        for row in try await engine.execute(Statement(requests), write: true) {
            guard decided.indices.contains(row.index - 1) else { continue }
            decided[row.index - 1] = row.decided
        }
        return decided
    }

    /// The conditional upsert, one row a request (the requests' columns as arrays, numbered by `unnest`'s
    /// ordinality): PostgreSQL takes each row's lock and decides from its latest committed counters and the token's
    /// override. The decision is `QuotaDecision.decide` written in SQL (the insert is the rule on a day's empty
    /// counters, the update on the row's); `QuotaLedgerContractTests` hold the two to each other on every state. A row
    /// with `check_dead` and a live dead-token mark is not written. It returns the row as written and
    /// `last_decision` (1 allowed, 2 refused with the day's notice, 0 refused), which `decodeRow` turns into the
    /// `QuotaDecision`. Prepared once per connection (`PostgresStorageEngine.execute`).
    struct Statement: PostgresPreparedStatement {
        typealias Row = (index: Int, decided: Decided)

        static let name = "pushrelay_reserve_v1"

        static let sql = """
            WITH r AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::boolean[], $7::text[])
                    WITH ORDINALITY AS r (day, push_token, app_id, webhook_id, policy_maximum, check_dead, stamp, i)
            ),
            m AS (
                SELECT r.*, coalesce((SELECT daily_limit FROM token_limits t WHERE t.push_token = r.push_token), r.policy_maximum) AS maximum
                FROM r
            )
            INSERT INTO daily_usage AS u (day, push_token, app_id, webhook_id, attempts, successful, errors, notice_sent, last_decision, updated_at)
            SELECT m.day, m.push_token, m.app_id, m.webhook_id, 1,
                CASE WHEN m.maximum > 0 THEN 1 ELSE 0 END, 0, CASE WHEN m.maximum > 0 THEN 0 ELSE 1 END,
                CASE WHEN m.maximum > 0 THEN 1 ELSE 2 END, m.stamp
            FROM m
            WHERE NOT (m.check_dead AND EXISTS (SELECT 1 FROM dead_tokens d WHERE d.push_token = m.push_token AND d.expires_at > m.stamp))
            ORDER BY m.day, m.push_token
            ON CONFLICT (day, push_token) DO UPDATE SET
                app_id = coalesce(excluded.app_id, u.app_id),
                webhook_id = coalesce(excluded.webhook_id, u.webhook_id),
                attempts = u.attempts + 1,
                successful = u.successful
                    + CASE WHEN u.successful < (SELECT maximum FROM m WHERE m.day = u.day AND m.push_token = u.push_token) THEN 1 ELSE 0 END,
                notice_sent = CASE WHEN u.successful < (SELECT maximum FROM m WHERE m.day = u.day AND m.push_token = u.push_token)
                    THEN u.notice_sent ELSE 1 END,
                last_decision = CASE WHEN u.successful < (SELECT maximum FROM m WHERE m.day = u.day AND m.push_token = u.push_token) THEN 1
                    WHEN u.notice_sent = 0 THEN 2 ELSE 0 END,
                updated_at = excluded.updated_at
            RETURNING (SELECT i FROM m WHERE m.day = u.day AND m.push_token = u.push_token),
                u.attempts, u.successful, u.errors, u.notice_sent, u.last_decision,
                (SELECT maximum FROM m WHERE m.day = u.day AND m.push_token = u.push_token)
            """

        var requests: [Request]

        init(_ requests: [Request]) {
            self.requests = requests
        }

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings(capacity: 7)
            binds.append(requests.map(\.day.description))
            binds.append(requests.map(\.pushToken))
            binds.append(PostgresTextArray(requests.map(\.appID)))
            binds.append(PostgresTextArray(requests.map(\.webhookID)))
            binds.append(requests.map(\.policyMaximum))
            binds.append(requests.map(\.checkDead))
            binds.append(requests.map(\.stamp))
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (index, attempts, successful, errors, notice, decision, maximum) = try row.decode((Int, Int, Int, Int, Int, Int, Int).self)
            let decided = QuotaDecision(
                allowed: decision == 1,
                sendNotice: decision == 2,
                counters: UsageCounters(attempts: attempts, successful: successful, errors: errors),
                noticeSent: notice != 0
            )
            return (index, Decided(decision: decided, maximum: maximum))
        }
    }
}
