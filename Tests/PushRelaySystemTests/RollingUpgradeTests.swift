import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP
import PushRelayPostgres
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// A rolling upgrade across a schema change on one PostgreSQL database, under a steady load of Home Assistant
/// notifications: two instances of this build behind a load balancer that follows `/ready`, replaced one at a time by
/// a newer build (this build's migrations plus an expand and a contract migration, `NewerBuild`), then
/// `migrate --finish`. No notification fails, and the quota counts each one exactly once across the change.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RollingUpgradeTests {
    /// One in-process PushRelay on the shared database, stopped as SIGTERM stops it.
    final class Instance: Sendable {
        let name: String
        let port: Int
        let lifecycle: ServerLifecycle
        let run: Task<Void, any Error>

        init(name: String, port: Int, lifecycle: ServerLifecycle, run: Task<Void, any Error>) {
            self.name = name
            self.port = port
            self.lifecycle = lifecycle
            self.run = run
        }

        static func start(_ name: String, database: PostgresTestDatabase, migrations: [Migration]) async throws -> Instance {
            var config = try PushRelayConfig.load(
                file: nil,
                environment: ["PUSHRELAY_HTTP_PORT": "0", "PUSHRELAY_STORAGE_BACKEND": "postgres", "PUSHRELAY_STORAGE_POSTGRES_URL": database.url]
            )
            config.http.drainPeriodMs = RollingUpgradeTests.drainMs
            config.quota.dailyLimit = 1_000_000
            var logger = Logger(label: "rolling.\(name)")
            logger.logLevel = .warning
            var storageConfig = try database.configuration(poolSize: 4)
            // Each instance looks at the schema five times a second (30 s in production), so one that would stop on
            // the newer build's schema stops within the test.
            storageConfig.schemaCheckInterval = .milliseconds(200)
            let storage = try await Storage.postgres(storageConfig, schema: .upgrade, migrations: migrations, logger: logger)
            let lifecycle = ServerLifecycle()
            let (ports, portsDone) = AsyncStream.makeStream(of: Int.self)
            let app = try await PushRelayApplication.build(config: config, storage: storage, lifecycle: lifecycle, logger: logger) { channel in
                portsDone.yield(channel.localAddress?.port ?? 0)
                portsDone.finish()
            }
            let run = Task { try await app.runService(gracefulShutdownSignals: []) }
            var port = 0
            for await p in ports { port = p }
            return Instance(name: name, port: port, lifecycle: lifecycle, run: run)
        }

        /// Stops as SIGTERM does (drain, then close) and returns once the instance has stopped.
        func stop() async throws {
            lifecycle.beginStop()
            try await run.value
        }
    }

    static let drainMs: Int64 = 600

    /// A load balancer that follows `/ready` every 100 ms and sends each request to the next ready backend.
    actor Balancer {
        private var backends: [(name: String, port: Int, ready: Bool)] = []
        private var next = 0
        private(set) var served: [String: Int] = [:]

        func add(_ instance: Instance) { backends.append((instance.name, instance.port, false)) }
        func remove(_ instance: Instance) { backends.removeAll { $0.port == instance.port } }
        func set(port: Int, ready: Bool) {
            if let i = backends.firstIndex(where: { $0.port == port }) { backends[i].ready = ready }
        }
        var ports: [Int] { backends.map(\.port) }

        /// The next ready backend, or nil when none is.
        func pick() -> (name: String, port: Int)? {
            let ready = backends.filter(\.ready)
            guard !ready.isEmpty else { return nil }
            next += 1
            let b = ready[next % ready.count]
            served[b.name, default: 0] += 1
            return (b.name, b.port)
        }

        func follow() async {
            while !Task.isCancelled {
                for port in ports {
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/ready")
                    request.method = .GET
                    let ready = (try? await HTTPClient.shared.execute(request, timeout: .seconds(1)).status.code) == 200
                    set(port: port, ready: ready)
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// What the clients saw.
    final class Tally: Sendable {
        private let state = Locked((ok: 0, failures: [String](), perToken: [String: Int]()))
        func ok(_ token: String) {
            state.withLock {
                $0.ok += 1
                $0.perToken[token, default: 0] += 1
            }
        }
        func failed(_ why: String) { state.withLock { $0.failures.append(why) } }
        var ok: Int { state.withLock { $0.ok } }
        var failures: [String] { state.withLock { $0.failures } }
        var perToken: [String: Int] { state.withLock { $0.perToken } }
    }

    static func body(token: String) -> JSONValue {
        [
            "message": "upgrade", "push_token": .string(token),
            "registration_info": [
                "app_id": "io.homeassistant.companion.android", "app_version": "1", "os_version": "14", "webhook_id": .string("hook-\(token)"),
            ],
        ]
    }

    @Test func replacingTheInstancesOneAtATimeAcrossASchemaChangeFailsNoNotification() async throws {
        let database = try await PostgresTestDatabase.create()
        let carried = PostgresStorageEngine.migrations
        let known = carried.map(\.version).max() ?? 0
        let newer = NewerBuild.migrations(after: carried)

        let a = try await Instance.start("old-a", database: database, migrations: carried)
        let b = try await Instance.start("old-b", database: database, migrations: carried)
        let balancer = Balancer()
        await balancer.add(a)
        await balancer.add(b)
        let follower = Task { await balancer.follow() }
        while await balancer.pick() == nil { try await Task.sleep(for: .milliseconds(20)) }

        let tally = Tally()
        let loadRunning = Locked(true)
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var i = 0
                        while loadRunning.withLock({ $0 }) {
                            guard let backend = await balancer.pick() else {
                                tally.failed("no backend was ready")
                                try? await Task.sleep(for: .milliseconds(20))
                                continue
                            }
                            let token = "roll-\(worker)-\(i % 16)"
                            i += 1
                            do {
                                let answer = try await CrashSafetyTests.post(port: backend.port, "/api/sendPush/android/v1", Self.body(token: token))
                                if answer.status == 201 { tally.ok(token) } else { tally.failed("\(backend.name): \(answer.status) \(answer.json)") }
                            } catch {
                                tally.failed("\(backend.name): \(error)")
                            }
                        }
                    }
                }
            }
        }
        func steady() async throws { try await Task.sleep(for: .milliseconds(700)) }

        try await steady()
        // The first instance of the newer build applies its expand migration; the older ones keep serving.
        let c = try await Instance.start("new-c", database: database, migrations: newer)
        await balancer.add(c)
        try await steady()
        let early = await #expect(throws: StorageError.self) {
            try await PostgresStorageEngine.open(try database.configuration(poolSize: 1), schema: .finish, migrations: newer)
        }
        guard case .olderInstancesAlive(let needs, let older)? = early else {
            Issue.record("migrate --finish was not refused while older instances served: \(String(describing: early))")
            return
        }
        #expect(needs == known + 1 && older.count == 2 && older.values.allSatisfy { $0 == known })

        // Replace the older instances one at a time.
        try await a.stop()
        await balancer.remove(a)
        let d = try await Instance.start("new-d", database: database, migrations: newer)
        await balancer.add(d)
        try await steady()
        try await b.stop()
        await balancer.remove(b)
        try await steady()

        // Every instance is new: the contract migration goes in.
        let finished = try await PostgresStorageEngine.open(try database.configuration(poolSize: 1), schema: .finish, migrations: newer)
        #expect(try await finished.appliedMigrations().map(\.version).max() == known + 2)
        try await finished.flushAndClose()
        try await steady()

        loadRunning.withLock { $0 = false }
        await load.value
        follower.cancel()
        try await c.stop()
        try await d.stop()

        let served = await balancer.served
        print("rolling upgrade: \(tally.ok) answered 201, \(tally.failures.count) failed, served by \(served)")
        #expect(tally.failures.isEmpty, "\(tally.failures.count) failed: \(tally.failures.prefix(5))")
        #expect(tally.ok > 200, "\(tally.ok) notifications")
        for name in ["old-a", "old-b", "new-c", "new-d"] { #expect(served[name, default: 0] > 0, "\(name) served none: \(served)") }
        // The quota counted each answered notification once, on whichever instance and schema it was taken.
        let rows = try await database.psql("SELECT push_token, successful FROM daily_usage WHERE push_token LIKE 'roll-%'")
        var counted: [String: Int] = [:]
        for line in rows.split(separator: "\n") {
            let cells = line.split(separator: "|")
            counted[String(cells[0])] = Int(cells[1])
        }
        #expect(counted == tally.perToken)
        let logged = try await database.psql("SELECT count(*) FROM delivery_log WHERE push_token LIKE 'roll-%' AND outcome = 'delivered'")
        #expect(Int(logged.trimmingCharacters(in: .whitespacesAndNewlines)) == tally.ok)
        try await database.drop()
    }
}
