import Foundation
import Logging
import PushRelayCore
import PushRelayPostgres
import PushRelaySQLite
import PushRelayServerTestRig
import PushRelayStore
import PushRelayTestHarness
import Testing

/// `pushrelay migrate-data`: an install's SQLite data, written through the storage APIs, reads back the same through
/// the same APIs on PostgreSQL after the real binary copied it.
@Suite struct MigrateDataTests {
    static let logger: Logger = {
        var l = Logger(label: "pushrelay.tests.migrate-data")
        l.logLevel = .warning
        return l
    }()

    /// What the SQLite install answered, to compare with PostgreSQL's answers.
    struct Expected {
        var tokens: [String]
        var rateLimits: [String: RateLimits]
        var history: [String: [UsageRow]]
        var limitOverride: Int?
        var dead: DeadToken?
        var apiKey: String
        var apiKeyID: Int64
        var device: CallDevice?
        var channelToken: String
        var channelTokenID: Int64
        var binding: PushChannelBinding?
        var pending: [PushChannelMessage]
        var matrixQueued: [MatrixRetryItem]
        var deliveries: [LoggedDelivery]
    }

    let now = Date()
    var today: UTCDay { UTCDay(now) }
    let policy = QuotaPolicy(dailyLimit: 5)
    let overLimit = "fcm-over:APA91bOverLimitToken0001"
    let plain = "fcm-plain:APA91bPlainToken0002"
    let deadToken = "fcm-dead:APA91bDeadToken0003"

    /// Fills a new SQLite database as a running install would.
    func seedSQLite(_ path: String) async throws -> Expected {
        let database = try PushRelayDatabase(path: path)
        try database.migrate()
        let storage = Storage.sqlite(database)

        try await storage.admin.setLimit(pushToken: overLimit, limit: 2, now: now)
        var refused = 0
        for _ in 0..<3 {
            let r = try await storage.quota.reserve(
                pushToken: overLimit,
                appID: "io.over",
                webhookID: "hook-over",
                day: today,
                policy: policy,
                now: now
            )
            if !r.decision.allowed { refused += 1 }
        }
        #expect(refused == 1, "the third reservation is over the override of 2")
        for i in 0..<2 {
            let r = try await storage.quota.reserve(pushToken: plain, appID: "io.plain", day: today, policy: policy, now: now)
            let record = DeliveryRecord(
                at: now,
                pushToken: plain,
                appID: "io.plain",
                platform: .homeAssistant(.android),
                provider: "fcm",
                kind: .notification,
                counted: true,
                outcome: i == 0 ? .delivered : .transient,
                messageID: i == 0 ? "projects/x/messages/1" : nil,
                errorMessage: i == 0 ? nil : "503 from upstream"
            )
            _ = try await storage.quota.complete(r, record: record, markDead: nil)
        }
        try await storage.deliveries.markDead(
            deadToken,
            DeadMark(provider: "fcm", reason: "UNREGISTERED", message: "Requested entity was not found.", until: now.addingTimeInterval(86400)),
            now: now
        )

        let (apiKey, apiKeyID) = try await storage.apiKeys.createAPIKey(label: "phone app", now: now)
        let device = CallDevice(
            id: UUID().uuidString.lowercased(),
            apiKeyID: apiKeyID,
            platform: .ios,
            appID: "io.calls",
            pushToken: "apns-device-token-0004",
            voipToken: "pushkit-token-0005",
            label: "Kitchen iPad",
            webhookID: "hook-calls",
            encryptionKey: Array(0..<32)
        )
        try await storage.devices.addDevice(device, now: now)

        let (channelToken, channelTokenID) = try await storage.pushChannel.createToken(webhookID: "hook-channel", label: "tablet", now: now)
        _ = try await storage.pushChannel.bind(PushChannelBinding(pushToken: plain, webhookID: "hook-channel"), now: now)
        let message = PushChannelMessage(
            id: "confirm-1",
            webhookID: "hook-channel",
            pushToken: plain,
            platform: .android,
            notification: ["message": "the door is open", "data": ["tag": "door"]],
            state: .queued,
            fallback: true,
            createdAt: now,
            expiresAt: now.addingTimeInterval(3600)
        )
        try await storage.pushChannel.save(message)

        try await storage.matrix.enqueue(
            [(appID: "im.vector.app", pushkey: "matrix-pushkey-1", eventID: "$event1", notification: #"{"notification":{}}"#, lastError: "503")],
            attempts: 2,
            nextAttemptAt: now.addingTimeInterval(30),
            now: now
        )
        try await storage.matrix.markSent(eventID: "$event1", pushkeys: ["matrix-pushkey-2"], at: now)
        try await storage.engine.flush()

        let expected = try await read(
            storage,
            apiKey: apiKey,
            apiKeyID: apiKeyID,
            device: device,
            channelToken: channelToken,
            channelTokenID: channelTokenID
        )
        try await database.flushAndClose()
        return expected
    }

    /// Reads everything the test compares through the storage protocols.
    func read(
        _ storage: Storage,
        apiKey: String,
        apiKeyID: Int64,
        device: CallDevice,
        channelToken: String,
        channelTokenID: Int64
    ) async throws -> Expected {
        let tokens = [overLimit, plain]
        var rateLimits: [String: RateLimits] = [:]
        var history: [String: [UsageRow]] = [:]
        for t in tokens {
            rateLimits[t] = try await storage.quota.rateLimits(pushToken: t, appID: nil, day: today, policy: policy)
            history[t] = try await storage.admin.history(pushToken: t, days: 30).rows
        }
        return Expected(
            tokens: tokens,
            rateLimits: rateLimits,
            history: history,
            limitOverride: try await storage.admin.history(pushToken: overLimit, days: 30).limitOverride,
            dead: try await storage.deliveries.deadToken(deadToken, now: now),
            apiKey: apiKey,
            apiKeyID: try await storage.apiKeys.apiKeyID(forKey: apiKey) ?? -1,
            device: try await storage.devices.device(id: device.id, apiKeyID: apiKeyID),
            channelToken: channelToken,
            channelTokenID: channelTokenID,
            binding: try await storage.pushChannel.binding(pushToken: plain),
            pending: try await storage.pushChannel.pending(webhookID: "hook-channel", pushToken: nil),
            matrixQueued: try await storage.matrix.queued(),
            deliveries: try await storage.deliveries.recentDeliveries(pushToken: nil, limit: 100)
        )
    }

    @Test func copiesAnInstallIntoPostgreSQLAndRefusesASecondTime() async throws {
        let pg = try await PostgresTestDatabase.create()
        let path = TestServer.tempPath()
        let sqlite = try await seedSQLite(path)
        // What the test seeded is there to compare (guards against comparing two empty answers).
        #expect(sqlite.rateLimits[overLimit]?.successful == 2 && sqlite.rateLimits[overLimit]?.maximum == 2)
        #expect(sqlite.dead != nil && sqlite.device != nil && sqlite.binding != nil)
        #expect(sqlite.pending.count == 1 && sqlite.matrixQueued.count == 1 && sqlite.deliveries.count == 2)

        let run = try await CLI.run(["migrate-data", "--from", "sqlite:\(path)", "--to", "postgres:\(pg.url)"])
        #expect(run.status == 0, "\(run.err)")
        for line in [
            "copied 2 rows to daily_usage", "copied 1 row to token_limits", "copied 1 row to dead_tokens", "copied 2 rows to delivery_log",
            "copied 1 row to api_keys", "copied 1 row to call_devices", "copied 1 row to channel_tokens", "copied 1 row to channel_bindings",
            "copied 1 row to channel_messages", "copied 1 row to matrix_retry_queue", "copied 2 rows to matrix_dedup",
        ] {
            #expect(run.out.contains(line + "\n"), "missing '\(line)' in:\n\(run.out)")
        }
        #expect(run.out.contains("copied 14 rows in 11 tables"), "\(run.out)")
        #expect(!run.out.contains(pg.server.password) && !run.err.contains(pg.server.password))

        let storage = try await Storage.postgres(try pg.configuration(), schema: .check, logger: Self.logger)
        let copied = try await read(
            storage,
            apiKey: sqlite.apiKey,
            apiKeyID: sqlite.apiKeyID,
            device: try #require(sqlite.device),
            channelToken: sqlite.channelToken,
            channelTokenID: sqlite.channelTokenID
        )
        for t in sqlite.tokens {
            #expect(copied.rateLimits[t] == sqlite.rateLimits[t], "rateLimits of \(t)")
            #expect(copied.history[t] == sqlite.history[t], "history of \(t)")
        }
        #expect(copied.limitOverride == 2)
        #expect(copied.dead == sqlite.dead)
        #expect(copied.apiKeyID == sqlite.apiKeyID)
        #expect(copied.device == sqlite.device)
        #expect(try await storage.devices.encryptionKey(forPushToken: "apns-device-token-0004") == Array(0..<32))
        #expect(try await storage.pushChannel.webhookID(forChannelToken: sqlite.channelToken) == "hook-channel")
        #expect(copied.binding == sqlite.binding)
        #expect(copied.pending == sqlite.pending)
        #expect(copied.matrixQueued == sqlite.matrixQueued)
        #expect(copied.deliveries == sqlite.deliveries)
        let seen = try await storage.matrix.lookup(
            eventID: "$event1",
            pushkeys: ["matrix-pushkey-2", "matrix-pushkey-3"],
            deadKeys: [],
            since: now.addingTimeInterval(-60),
            now: now
        )
        #expect(seen.seen == ["matrix-pushkey-2"])
        // The copied over-limit token stays refused; the dead token is still answered dead.
        let again = try await storage.quota.reserveUnlessDead(
            pushToken: overLimit,
            appID: "io.over",
            webhookID: nil,
            day: today,
            policy: policy,
            now: now,
            checkDead: true
        )
        guard case .reserved(let r) = again else {
            Issue.record("not a reservation: \(again)")
            return
        }
        #expect(!r.decision.allowed)

        // A second run finds the tables full and changes nothing.
        let second = try await CLI.run(["migrate-data", "--from", "sqlite:\(path)"], env: ["PUSHRELAY_STORAGE_POSTGRES_URL": pg.url])
        #expect(second.status == 1)
        #expect(second.err.contains("the PostgreSQL database is not empty"), "\(second.err)")
        #expect(second.err.split(separator: "\n").count == 1, "one line: \(second.err)")
        #expect(!second.err.contains(pg.server.password))
        #expect(second.out.isEmpty)
        #expect(try await pg.psql("SELECT count(*) FROM daily_usage") == "2")

        // New rows get ids past the copied ones (the identity sequences were moved on).
        let (_, newKeyID) = try await storage.apiKeys.createAPIKey(label: "new", now: now)
        #expect(newKeyID > sqlite.apiKeyID)
        let (_, newChannelID) = try await storage.pushChannel.createToken(webhookID: "hook-new", label: nil, now: now)
        #expect(newChannelID > sqlite.channelTokenID)
        try await storage.matrix.enqueue(
            [(appID: "im.vector.app", pushkey: "matrix-pushkey-9", eventID: "$event9", notification: "{}", lastError: "503")],
            attempts: 1,
            nextAttemptAt: now,
            now: now
        )
        #expect(Set(try await storage.matrix.queued().map(\.id)).count == 2)

        try await storage.engine.flushAndClose()
        try await pg.drop()
    }

    @Test func theDeliveryLogCanBeLeftOut() async throws {
        let pg = try await PostgresTestDatabase.create()
        let path = TestServer.tempPath()
        _ = try await seedSQLite(path)
        let run = try await CLI.run(["migrate-data", "--from", "sqlite:\(path)", "--to", pg.url, "--skip-delivery-log"])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.out.contains("skipped delivery_log"))
        #expect(!run.out.contains("to delivery_log"))
        #expect(try await pg.psql("SELECT count(*) FROM delivery_log") == "0")
        #expect(try await pg.psql("SELECT count(*) FROM daily_usage") == "2")
        try await pg.drop()
    }

    /// Refusals that need no PostgreSQL: each is one line, and nothing is created.
    @Test func refusesWhatItCannotCopy() async throws {
        let url = "postgres://pushrelay:s3cret-pw@127.0.0.1:1/pushrelay"

        let missing = TestServer.tempPath()
        let noFile = try await CLI.run(["migrate-data", "--from", "sqlite:\(missing)", "--to", "postgres:\(url)"])
        #expect(noFile.status == 1 && noFile.err.contains("no SQLite database at"), "\(noFile.err)")
        #expect(!FileManager.default.fileExists(atPath: missing), "a missing database is not created")

        // A database an older build left at schema version 5.
        let old = TestServer.tempPath()
        let database = try PushRelayDatabase(path: old)
        try database.migrate(Array(PushRelayDatabase.migrations.sorted { $0.version < $1.version }.prefix(5)))
        try database.close()
        let outdated = try await CLI.run(["migrate-data", "--from", "sqlite:\(old)", "--to", "postgres:\(url)"])
        #expect(outdated.status == 1)
        #expect(outdated.err.contains("schema version 5") && outdated.err.contains("pushrelay migrate"), "\(outdated.err)")
        #expect(outdated.err.split(separator: "\n").count == 1)

        let badFrom = try await CLI.run(["migrate-data", "--from", old, "--to", "postgres:\(url)"])
        #expect(badFrom.status != 0 && badFrom.err.contains("--from must be sqlite:PATH"), "\(badFrom.err)")
        let badTo = try await CLI.run(["migrate-data", "--from", "sqlite:\(old)", "--to", "mysql://x@y/z"])
        #expect(badTo.status != 0 && badTo.err.contains("--to must be postgres:URL"), "\(badTo.err)")
        let noTo = try await CLI.run(["migrate-data", "--from", "sqlite:\(old)"])
        #expect(noTo.status != 0 && noTo.err.contains("PUSHRELAY_STORAGE_POSTGRES_URL"), "\(noTo.err)")

        // A migrated database and a PostgreSQL that is not there: one line, without the password.
        let current = TestServer.tempPath()
        let fresh = try PushRelayDatabase(path: current)
        try fresh.migrate()
        try fresh.close()
        let refused = try await CLI.run(["migrate-data", "--from", "sqlite:\(current)", "--to", "postgres:\(url)"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("cannot connect to PostgreSQL at 127.0.0.1:1/pushrelay"), "\(refused.err)")
        #expect(!refused.err.contains("s3cret-pw") && !refused.out.contains("s3cret-pw"))
        #expect(!refused.err.contains("Backtrace") && !refused.err.contains("Fatal error"))
    }
}
