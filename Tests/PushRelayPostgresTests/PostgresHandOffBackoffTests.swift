import Foundation
import PushRelayCore
import PushRelayStore
import PushRelayTestHarness
import PushRelayTestSupport
import Testing

@testable import PushRelayPostgres

/// The hand-off listener's reconnect backoff runs on the engine's clock: a listen that keeps failing is started again
/// only when the clock reaches the next wait, and the waits double from 100 ms up to 2 s.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)), .timeLimit(.minutes(2)))
struct PostgresHandOffBackoffTests {
    @Test func aFailingListenIsRetriedOnlyWhenTheClockReachesTheNextWait() async throws {
        let database = try await PostgresTestDatabase.create()
        let clock = ManualClock()
        let engine = try await PostgresStorageEngine.open(try database.configuration(), logger: PostgresTestServer.logger, clock: clock)
        let routing = try #require(Storage.postgres(engine).routing)
        // Every session PostgreSQL starts from now on is ended once idle for 50 ms: each LISTEN the routing starts is
        // ended shortly after it is in place. (The pool holds no connection yet: it opens them on demand.)
        try await database.psql("ALTER DATABASE \(database.name) SET idle_session_timeout = '50ms'")
        let listening = Task { for await _ in routing.events() {} }

        // The schema watch's timer, the look at a listening connection (once a second) and the 10 s mark of a listen
        // that lasts are not retry waits.
        let isRetryWait: @Sendable (Duration) -> Bool = { $0 < .seconds(10) && $0 != StatementWatch.defaultInterval }
        var waits: [Duration] = []
        for _ in 0..<7 {
            let wait = await clock.nextScheduled(where: isRetryWait)
            waits.append(wait)
            // Until the clock moves, the listener waits on this one timer: no retry, no other wait.
            #expect(clock.pendingDelays.filter(isRetryWait) == [wait])
            clock.advance(by: wait)
        }
        #expect(
            waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600), .seconds(2), .seconds(2)]
        )

        listening.cancel()
        try await engine.flushAndClose()
        try await database.drop()
    }
}
