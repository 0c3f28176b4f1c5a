import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayPostgres

/// A statement that holds its connection past its limit fails with a storage error at the limit, its connection is
/// closed, and the pool serves the next request on another: a statement that gets no answer cannot hold its request,
/// and every request batched behind it, for ever.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresStatementLimitTests {
    @Test func aStatementPastItsLimitFailsAtTheLimitAndTheNextOneRunsOnAnotherConnection() async throws {
        let database = try await PostgresTestDatabase.create()
        var config = try database.configuration()
        config.poolSize = 1
        let engine = try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger)
        let logger = PostgresTestServer.logger
        let started = ContinuousClock.now
        let error = await #expect(throws: PostgresStoreError.self) {
            try await engine.perform(write: false, limit: .milliseconds(300)) { connection in
                try await connection.query("SELECT pg_sleep(30)", logger: logger).collect().count
            }
        }
        #expect(ContinuousClock.now - started < .seconds(10), "answered at the limit, not when the statement ends")
        #expect(error?.description.contains("no answer from") == true, "\(String(describing: error))")
        // The only pooled connection was closed; the pool opens another and the next statement runs on it.
        let rows = try await engine.rows("SELECT 1", write: false)
        #expect(rows.count == 1)
        // Without a limit (maintenance: pruning, copying) a statement runs as long as it takes.
        let slow = try await engine.perform(write: false, limit: nil) { connection in
            try await connection.query("SELECT pg_sleep(0.5)", logger: logger).collect().count
        }
        #expect(slow == 1)
        try await engine.flushAndClose()
    }
}
