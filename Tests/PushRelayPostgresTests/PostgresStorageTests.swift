import Foundation
import Logging
import PushRelayCore
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayPostgres

/// What PostgreSQL must do beyond the contract suite: several instances (separate pools) on one database agree, work
/// queues are claimed once, and failures to open are one clear line.
///
/// Load: several pools claiming one database's work queues at once, each claim held to its wait.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresStorageTests {
    let day = UTCDay(string: "2026-11-21")!
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func twoInstancesGetExactlyTheLimitAndOneNoticeBetweenThem() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let a = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let b = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let day = self.day
        let decisions = try await withThrowingTaskGroup(of: QuotaDecision.self) { group in
            for i in 0..<256 {
                let instance = i.isMultiple(of: 2) ? a : b
                group.addTask {
                    try await instance.quota.reserve(pushToken: "hot", appID: "io.app", day: day, policy: QuotaPolicy(dailyLimit: 50), now: day.start)
                        .decision
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(decisions.filter(\.allowed).count == 50)
        #expect(decisions.filter(\.sendNotice).count == 1)
        for instance in [a, b] {
            let limits = try await instance.quota.rateLimits(pushToken: "hot", appID: "io.app", day: day, policy: QuotaPolicy(dailyLimit: 50))
            #expect(limits.successful == 50 && limits.attempts == 256 && limits.remaining == 0)
        }
        try await a.engine.flushAndClose()
        try await b.engine.flushAndClose()
    }

    @Test func aClaimedRetryIsNotClaimedByTheOtherInstanceUntilItsLeaseEnds() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let a = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let b = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        try await a.matrix.enqueue(
            [
                (appID: "app", pushkey: "k1", eventID: "$1", notification: "{}", lastError: "503"),
                (appID: "app", pushkey: "k2", eventID: "$1", notification: "{}", lastError: "503"),
            ],
            attempts: 1,
            nextAttemptAt: now,
            now: now
        )
        let claimedByA = try await a.matrix.claimDue(now: now, limit: 1, lease: .seconds(30))
        #expect(claimedByA.map(\.pushkey) == ["k1"])
        // B gets only what A did not claim, and neither sees the claimed item as due.
        #expect(try await b.matrix.claimDue(now: now, limit: 10, lease: .seconds(30)).map(\.pushkey) == ["k2"])
        #expect(try await b.matrix.claimDue(now: now.addingTimeInterval(29), limit: 10, lease: .seconds(30)).isEmpty)
        #expect(try await b.matrix.due(now: now.addingTimeInterval(29), limit: 10).isEmpty)
        // A "crashed": after its lease, the item is B's to claim.
        #expect(try await b.matrix.claimDue(now: now.addingTimeInterval(31), limit: 10, lease: .seconds(30)).map(\.pushkey) == ["k1", "k2"])
        // Rescheduling ends the claim: due again at its new time, for anyone.
        let item = try #require(claimedByA.first)
        try await b.matrix.reschedule(id: item.id, attempts: 2, next: now.addingTimeInterval(40), lastError: "again")
        #expect(try await a.matrix.claimDue(now: now.addingTimeInterval(40), limit: 10, lease: .seconds(30)).map(\.attempts) == [2])
        try await a.engine.flushAndClose()
        try await b.engine.flushAndClose()
    }

    @Test func concurrentClaimsNeverHandOutAnItemTwice() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let a = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let b = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let items = (0..<100).map { (appID: "app", pushkey: "k\($0)", eventID: String?.none, notification: "{}", lastError: "503") }
        try await a.matrix.enqueue(items, attempts: 1, nextAttemptAt: now, now: now)
        let now = self.now
        let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for i in 0..<20 {
                let instance = i.isMultiple(of: 2) ? a : b
                group.addTask { try await instance.matrix.claimDue(now: now, limit: 7, lease: .seconds(60)).map(\.id) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claimed.count == 100)
        #expect(Set(claimed).count == 100)
        try await a.engine.flushAndClose()
        try await b.engine.flushAndClose()
    }

    @Test func aRefusedConnectionIsOneClearLine() async throws {
        _ = try await PostgresTestServer.require()
        let port = try PostgresServerProcess.freePort()
        let config = PostgresStorageConfiguration(host: "127.0.0.1", port: port, username: "u", password: "s3cret-pw", database: "d", tls: .disable)
        let error = await #expect(throws: PostgresStoreError.self) { try await Storage.postgres(config, logger: PostgresTestServer.logger) }
        let line = try #require(error).description
        #expect(line.hasPrefix("cannot connect to PostgreSQL at 127.0.0.1:\(port)/d: "), "\(line)")
        #expect(!line.contains("\n") && !line.contains("s3cret-pw"), "\(line)")
    }

    @Test func aWrongPasswordIsOneClearLine() async throws {
        let good = try await PostgresTestDatabase.create().configuration()
        var config = good
        config.password = "wrong-secret"
        let error = await #expect(throws: PostgresStoreError.self) { try await Storage.postgres(config, logger: PostgresTestServer.logger) }
        guard case .authenticationFailed = try #require(error) else {
            Issue.record("expected authenticationFailed, got \(String(describing: error))")
            return
        }
        let line = try #require(error).description
        #expect(line.contains("refused the login") && line.contains("password authentication failed"), "\(line)")
        #expect(!line.contains("\n") && !line.contains("wrong-secret") && !line.contains(good.password ?? "-"), "\(line)")
    }

    @Test func aMissingDatabaseIsOneClearLine() async throws {
        var config = try await PostgresTestDatabase.create().configuration()
        config.database = "no_such_db"
        let error = await #expect(throws: PostgresStoreError.self) { try await Storage.postgres(config, logger: PostgresTestServer.logger) }
        let line = try #require(error).description
        #expect(line.contains("no_such_db") && !line.contains("\n"), "\(line)")
    }

    @Test func aSchemaNewerThanTheBinaryIsRefused() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let first = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        try await first.engine.flushAndClose()
        let server = try await PostgresTestServer.require()
        try await PostgresTestServer.psql(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '099_future', '2030-01-01T00:00:00Z')",
            on: server,
            database: config.database
        )
        let error = await #expect(throws: StorageError.self) { try await Storage.postgres(config, logger: PostgresTestServer.logger) }
        #expect(try #require(error).description.contains("schema version 99"))
        await #expect(throws: StorageError.self) { try await Storage.postgres(config, schema: .check, logger: PostgresTestServer.logger) }
    }

    @Test func migratingTwiceOrConcurrentlyAppliesEachMigrationOnce() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let engines = try await withThrowingTaskGroup(of: PostgresStorageEngine.self) { group in
            for _ in 0..<3 { group.addTask { try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let applied = try await engines[0].appliedMigrations()
        #expect(applied.map(\.version) == PostgresStorageEngine.migrations.map(\.version).sorted())
        for e in engines { try await e.flushAndClose() }
    }

    @Test func aQueuedSaveIsNeverOvertakenByItsDelete() async throws {
        let storage = try await Storage.postgres(try await PostgresTestDatabase.create().configuration(), logger: PostgresTestServer.logger)
        let now = self.now
        // Each save is queued without waiting and its delete asked for at once: on a pool, the delete could run first
        // and leave the message behind for ever.
        let removed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<50 {
                let m = PushChannelMessage(
                    id: "m\(i)",
                    webhookID: "w",
                    pushToken: "t",
                    platform: .android,
                    notification: ["message": "hi"],
                    state: .unconfirmed,
                    fallback: true,
                    createdAt: now,
                    expiresAt: now.addingTimeInterval(60)
                )
                let saved = storage.pushChannel.enqueueSave(m, count: .delivered)
                group.addTask {
                    let existed = try await storage.pushChannel.remove(id: m.id, count: nil, token: nil, now: now)
                    try await saved.value
                    return existed
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(removed.allSatisfy { $0 })
        #expect(try await storage.pushChannel.all().isEmpty)
        #expect(try await storage.pushChannel.counters(pushToken: "t", day: UTCDay(now)).delivered == 50)
        try await storage.engine.flushAndClose()
    }

    @Test func requestsAfterCloseFailAsClosed() async throws {
        let storage = try await Storage.postgres(try await PostgresTestDatabase.create().configuration(), logger: PostgresTestServer.logger)
        try await storage.engine.flushAndClose()
        await #expect(throws: StorageError.closed) { try await storage.deliveries.deadToken("x", now: now) }
    }
    /// Holder lookups that arrive together are answered by one statement: each still gets its own answer (the
    /// webhook id's channel, a push-token channel, or none), and one lookup PostgreSQL cannot run (a NUL in its push
    /// token) fails alone.
    @Test func concurrentHolderLookupsEachGetTheirOwnAnswer() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let a = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let b = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let (routingA, routingB) = (try #require(a.routing), try #require(b.routing))
        try await routingA.heartbeat(staleAfter: .seconds(30))
        try await routingB.heartbeat(staleAfter: .seconds(30))
        for i in 0..<20 {
            // Even webhooks: a webhook-id channel on B, with confirm; odd ones: a push-token channel on B, without.
            try await routingB.claimPresence(
                webhookID: "w\(i)",
                pushToken: i.isMultiple(of: 2) ? nil : "t\(i)",
                supportConfirm: i.isMultiple(of: 2),
                fallback: true
            )
        }
        let answers = try await withThrowingTaskGroup(of: (Int, PushChannelHolder?).self) { group in
            for i in 0..<60 {
                group.addTask { (i, try await routingA.holder(webhookID: "w\(i % 30)", pushToken: "t\(i % 30)", staleAfter: .seconds(30))) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for i in 0..<60 {
            let n = i % 30
            let expected = n < 20 ? PushChannelHolder(instanceID: routingB.instanceID, supportConfirm: n.isMultiple(of: 2), fallback: true) : nil
            #expect(answers[i] == .some(expected), "lookup \(i)")
        }
        // B's own channels are not another instance's: B asks and finds none.
        #expect(try await routingB.holder(webhookID: "w0", pushToken: "t0", staleAfter: .seconds(30)) == nil)
        await #expect(throws: (any Error).self) {
            try await routingA.holder(webhookID: "w1", pushToken: "t\u{0}1", staleAfter: .seconds(30))
        }
        #expect(try await routingA.holder(webhookID: "w2", pushToken: "t2", staleAfter: .seconds(30))?.instanceID == routingB.instanceID)
        try await a.engine.flushAndClose()
        try await b.engine.flushAndClose()
    }
}

/// Nothing waits on PostgreSQL for ever: every pooled connection has a lock timeout, and a transaction left open by a
/// client that went away is ended by the server (a restart under load once left requests waiting on such locks).
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresSessionLimitTests {
    @Test func everyConnectionHasALockTimeoutAndAnIdleTransactionTimeout() async throws {
        let config = try await PostgresTestDatabase.create().configuration()
        let storage = try await Storage.postgres(config, logger: PostgresTestServer.logger)
        let engine = try #require(storage.engine as? PostgresStorageEngine)
        let lock = try await engine.rows("SHOW lock_timeout", write: false).first?.decode(String.self)
        let idle = try await engine.rows("SHOW idle_in_transaction_session_timeout", write: false).first?.decode(String.self)
        #expect(lock == "5s")
        #expect(idle == "10s")
        try await storage.engine.flushAndClose()
    }

    /// The pool keeps one connection open from the start, and opens no more than `pool_size`, each with PostgreSQL's
    /// TCP keep-alives on (the pool sends no keep-alive queries of its own).
    @Test func thePoolKeepsAConnectionOpenWithTCPKeepAlivesAndOpensAtMostItsSize() async throws {
        let database = try await PostgresTestDatabase.create()
        let storage = try await Storage.postgres(try database.configuration(poolSize: 3), logger: PostgresTestServer.logger)
        let engine = try #require(storage.engine as? PostgresStorageEngine)
        let count = {
            let n = try await database.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
            return Int(n.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        try await eventually("the pool holds a connection") { try await count() >= 1 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try await engine.rows("SELECT pg_sleep(0.2)", write: false) } }
            try await group.waitForAll()
        }
        #expect(try await count() <= 3)
        let keepAlive = try await engine.rows(
            "SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'), current_setting('tcp_keepalives_count')",
            write: false
        ).first?.decode((String, String, String).self)
        #expect(keepAlive.map { [$0.0, $0.1, $0.2] } == ["30", "10", "3"])
        try await storage.engine.flushAndClose()
        try await database.drop()
    }
}
