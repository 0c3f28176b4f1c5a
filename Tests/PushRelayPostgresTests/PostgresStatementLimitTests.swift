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
    /// An engine on a new database whose pool holds one connection, so that the next statement needs a new one.
    static func engineWithOneConnection() async throws -> PostgresStorageEngine {
        var config = try await PostgresTestDatabase.create().configuration()
        config.poolSize = 1
        // The product's wait: these tests look at how long a request is held.
        config.connectionWait = .seconds(5)
        return try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger)
    }

    @Test func aStatementPastItsLimitFailsAtTheLimitAndTheNextOneRunsOnAnotherConnection() async throws {
        let engine = try await Self.engineWithOneConnection()
        let logger = PostgresTestServer.logger
        let started = ContinuousClock.now
        let error = await #expect(throws: PostgresStoreError.self) {
            try await engine.perform(write: false, limit: .milliseconds(300)) { connection in
                try await connection.query("SELECT pg_sleep(30)", logger: logger).collect().count
            }
        }
        #expect(ContinuousClock.now - started < .seconds(10), "answered at the limit, not when the statement ends")
        #expect(error?.description.contains("no answer from") == true, "\(String(describing: error))")
        // The only pooled connection was closed; the pool opens another and the next statement runs on it. (Until
        // then a statement gets its 503 after the short wait of a known fault; on a machine busy with the rest of the
        // suite the new connection can take longer than that.)
        try await eventually("a statement runs on a new connection", seconds: 10) {
            (try? await engine.rows("SELECT 1", write: false))?.count == 1
        }
        // Without a limit (maintenance: pruning, copying) a statement runs as long as it takes.
        let slow = try await engine.perform(write: false, limit: nil) { connection in
            try await connection.query("SELECT pg_sleep(0.5)", logger: logger).collect().count
        }
        #expect(slow == 1)
        try await engine.flushAndClose()
    }

    /// The pool learns of a closed connection after the fact, and may hand it to the next request meanwhile; a
    /// statement written to a closed connection is never answered. The next request is answered within about a second
    /// instead (on a new connection, or with a storage error), never held until its statement limit.
    @Test func aConnectionClosedWhileLeasedIsNotUsedForTheNextStatement() async throws {
        let engine = try await Self.engineWithOneConnection()
        let logger = PostgresTestServer.logger
        for _ in 0..<20 {
            // Closed as it goes back to the pool, as when the statement limit closes a connection whose statement
            // then fails.
            _ = try? await engine.perform(write: false) { connection in connection.close().whenComplete { _ in } }
            let started = ContinuousClock.now
            _ = try? await engine.perform(write: false, limit: .seconds(30)) { connection in
                try await connection.query("SELECT 1", logger: logger).collect().count
            }
            // The watch looks once a second; without it the request would wait for the whole 30 s.
            #expect(ContinuousClock.now - started < .seconds(5), "held as if the statement could still be answered")
        }
        try await eventually("a statement runs on a new connection", seconds: 10) {
            (try? await engine.rows("SELECT 1", write: false))?.count == 1
        }
        try await engine.flushAndClose()
    }
}
