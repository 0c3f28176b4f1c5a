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

    /// Rows per statement: 12 parameters each, well under PostgreSQL's 65,535 parameters a statement.
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
                try await engine.rows(PostgresRows.insertLogs(batch.map { ($0.record, $0.day) }), write: true)
            } catch {
                for entry in batch { entry.onError(error) }
            }
        }
    }
}
