import PostgresNIO
import PushRelayCore
import PushRelayStore

/// Writes the delivery-log rows of delivered notifications in batches: one multi-row `INSERT` (one statement, one
/// commit) for every record that arrived while the previous insert ran.
///
/// The rows are fire-and-forget as before (the answer does not wait for them; `flush` does), so batching changes no
/// promise: it only spares PostgreSQL a commit and PushRelay a pooled round trip per notification, which is what
/// bounded the PostgreSQL throughput (`Benchmarks/README.md`). No timer: an idle writer starts at once, so a lone
/// record is written as soon as before, and batches only form under load.
final class DeliveredLogWriter: Sendable {
    typealias Entry = (record: DeliveryRecord, day: UTCDay, onError: @Sendable (any Error) -> Void)

    /// Rows per statement (twelve arrays: the statement's text does not grow with the batch).
    static let maxBatch = 512

    private struct State {
        var pending: [Entry] = []
        var writing = false
    }

    private let engine: PostgresStorageEngine
    private let state = Locked(State())

    init(engine: PostgresStorageEngine) {
        self.engine = engine
    }

    func append(_ record: DeliveryRecord, day: UTCDay, onError: @escaping @Sendable (any Error) -> Void) {
        let start = state.withLock { s -> Bool in
            s.pending.append((record, day, onError))
            if s.writing { return false }
            s.writing = true
            return true
        }
        // Tracked by the engine's in-flight writes: `flush` waits for this drain, which takes every record appended
        // before it ends.
        if start { engine.inFlight.start { await self.drain() } }
    }

    private func drain() async {
        while true {
            let batch = state.withLock { s -> [Entry] in
                let batch = Array(s.pending.prefix(Self.maxBatch))
                s.pending.removeFirst(batch.count)
                if batch.isEmpty { s.writing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                _ = try await engine.execute(Statement(batch.map { ($0.record, $0.day) }), write: true)
            } catch {
                for entry in batch { entry.onError(error) }
            }
        }
    }

    /// One `INSERT` of many delivery-log rows (`PostgresRows.insertLog`'s columns, one array each). Prepared once per
    /// connection.
    struct Statement: PostgresPreparedStatement {
        typealias Row = Void

        static let name = "pushrelay_insert_logs_v1"

        static let sql = """
            INSERT INTO delivery_log (at, day, push_token, app_id, platform, provider, kind, counted, outcome, message_id, error_message, payload)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::integer[],
                $9::text[], $10::text[], $11::text[], $12::text[])
            """

        var records: [(record: DeliveryRecord, day: UTCDay)]

        init(_ records: [(record: DeliveryRecord, day: UTCDay)]) {
            self.records = records
        }

        func makeBindings() -> PostgresBindings {
            let r = records.map(\.record)
            var binds = PostgresBindings(capacity: 12)
            binds.append(r.map { ISO8601UTC.string($0.at) })
            binds.append(records.map(\.day.description))
            binds.append(r.map(\.pushToken))
            binds.append(PostgresTextArray(r.map(\.appID)))
            binds.append(PostgresTextArray(r.map { $0.platform?.rawValue }))
            binds.append(r.map(\.provider))
            binds.append(r.map(\.kind.rawValue))
            binds.append(r.map { Int32($0.counted ? 1 : 0) })
            binds.append(r.map(\.outcome.rawValue))
            binds.append(PostgresTextArray(r.map(\.messageID)))
            binds.append(PostgresTextArray(r.map(\.errorMessage)))
            binds.append(PostgresTextArray(r.map(\.payload)))
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }
}
