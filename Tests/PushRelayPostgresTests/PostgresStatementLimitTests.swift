import Foundation
import PostgresNIO
import PushRelayCore
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayPostgres

/// A statement that holds its connection past its limit fails with a storage error at the limit, its connection is
/// closed, and the pool serves the next request on another: a statement that gets no answer cannot hold its request,
/// and every request batched behind it, for ever.
///
/// ThreadSanitizer: a statement raced against its connection wait, its limit and its watch.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresStatementLimitTests {
    /// An engine on a new database whose pool holds one connection, so that the next statement needs a new one, and
    /// whose waits and statement watches run on `clock`.
    static func engineWithOneConnection(clock: ManualClock) async throws -> PostgresStorageEngine {
        var config = try await PostgresTestDatabase.create().configuration()
        config.poolSize = 1
        config.connectionWait = .seconds(5)
        return try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger, clock: clock)
    }

    /// Runs `request` and moves `clock` on by `step` at a time until it is answered; returns its result and how far
    /// the clock was moved. A request that only its statement's end would answer is never answered here (the
    /// statement runs far longer than the test may wait).
    static func stepping<T: Sendable>(
        _ clock: ManualClock,
        by step: Duration,
        _ request: @escaping @Sendable () async throws -> T
    ) async throws -> (Result<T, any Error>, stepped: Duration) {
        let answer = Locked<Result<T, any Error>?>(nil)
        let task = Task {
            let result = await Result(catching: request)
            answer.withLock { $0 = result }
        }
        var stepped = Duration.zero
        try await eventually("the request is answered as the engine's clock moves", seconds: 20) {
            if answer.withLock({ $0 }) != nil { return true }
            clock.advance(by: step)
            stepped += step
            return false
        }
        await task.value
        return (try #require(answer.withLock { $0 }), stepped)
    }

    @Test func aStatementPastItsLimitFailsAtTheLimitAndTheNextOneRunsOnAnotherConnection() async throws {
        let clock = ManualClock()
        let engine = try await Self.engineWithOneConnection(clock: clock)
        let logger = PostgresTestServer.logger
        // The statement sleeps 30 s of real time; its limit is 300 ms on the engine's clock.
        let (result, stepped) = try await Self.stepping(clock, by: .milliseconds(100)) {
            try await engine.perform(write: false, limit: .milliseconds(300)) { connection in
                try await connection.query("SELECT pg_sleep(30)", logger: logger).collect().count
            }
        }
        let error = try #require(result.failureValue as? PostgresStoreError, "answered at the limit, not when the statement ends")
        #expect(error.description.contains("no answer from"), "\(error)")
        #expect(stepped >= .milliseconds(300), "not answered before its limit")
        // The only pooled connection was closed; the pool opens another and the next statement runs on it.
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
    /// statement written to a closed connection is never answered. The next request is answered at the watch's next
    /// look (on a new connection, or with a storage error), never held until its statement limit.
    @Test func aConnectionClosedWhileLeasedIsNotUsedForTheNextStatement() async throws {
        let clock = ManualClock()
        let engine = try await Self.engineWithOneConnection(clock: clock)
        let logger = PostgresTestServer.logger
        for _ in 0..<20 {
            // Closed as it goes back to the pool, as when the statement limit closes a connection whose statement
            // then fails.
            _ = try? await engine.perform(write: false) { connection in connection.close().whenComplete { _ in } }
            // The watch looks once a second of the engine's clock; without it the request would wait for its limit.
            let (_, stepped) = try await Self.stepping(clock, by: .seconds(1)) {
                try await engine.perform(write: false, limit: .seconds(30)) { connection in
                    try await connection.query("SELECT 1", logger: logger).collect().count
                }
            }
            #expect(stepped < .seconds(30), "held as if the statement could still be answered")
        }
        try await eventually("a statement runs on a new connection", seconds: 10) {
            (try? await engine.rows("SELECT 1", write: false))?.count == 1
        }
        try await engine.flushAndClose()
    }
}

extension Result {
    fileprivate var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
