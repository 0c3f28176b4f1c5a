import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import PushRelayCore
import PushRelayEventLoopClock
import PushRelayStore
import Synchronization

/// The PostgreSQL engine behind a `Storage`: a `PostgresClient` (postgres-nio's connection pool) that this object
/// runs itself from `open` until `flushAndClose`, the health of its writes, and its figures for `/metrics`.
///
/// Every decision that must hold across instances is made by PostgreSQL in one statement or transaction (see the
/// stores); nothing is cached here. A request that finds no connection within `connectionWait` fails with
/// `PostgresStoreError.unavailable` (the server answers 503) while the pool keeps reconnecting in the background.
public final class PostgresStorageEngine: StorageEngine {
    public let configuration: PostgresStorageConfiguration
    /// This process's id among the instances sharing the database (new at every open).
    public let instanceID = "i" + RandomID.hex128().prefix(16)
    /// The migrations this engine was opened with, and what they allow (`SchemaPlan`).
    public let plan: SchemaPlan
    let client: PostgresClient
    let logger: Logger
    /// What the engine's waits run on: the schema check's interval, the give-up on closing the pool, and the routing's
    /// reconnect backoff.
    let clock: any TimePort
    /// `host:port/database`, for messages.
    let target: String
    private let runTask: Task<Void, Never>
    /// Checks every `schemaCheckInterval` that the schema is still one this build knows.
    private let schemaWatch = Locked(SchemaWatch())
    /// The newer schema version another instance migrated to (0: none found): once set, every request is refused.
    private let newerSchema = Atomic<Int>(0)
    private let faults = PostgresFaultTracker()
    let inFlight = InFlightWrites()
    private let queries = Atomic<Int>(0)
    private let errors = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    /// The migrations this build carries (generated from `migrations/postgres/*.sql`).
    public static var migrations: [Migration] { EmbeddedPostgresMigrations.all }

    /// Connects once to check the URL and credentials, brings the schema to what `schema` asks of `migrations`
    /// (`SchemaPlan`: `.upgrade` for `serve` and `migrate`, `.check` for the commands that do not migrate), then
    /// starts the pool. Every failure is one `PostgresStoreError` or `StorageError` line. Call `flushAndClose` at the
    /// end: it stops the pool.
    ///
    /// `clock` runs the engine's waits (a request's wait for a connection and the watch of its statement, the periodic
    /// schema check, the give-up on closing the pool, the routing's reconnect backoff); nil (the default) is the
    /// system's time on postgres-nio's event loops (`EventLoopClock`). Tests pass a `ManualClock`.
    public static func open(
        _ configuration: PostgresStorageConfiguration,
        schema: SchemaStep = .upgrade,
        migrations: [Migration] = PostgresStorageEngine.migrations,
        logger: Logger = Logger(label: "pushrelay.postgres"),
        clock: (any TimePort)? = nil
    ) async throws -> PostgresStorageEngine {
        let target = "\(configuration.host):\(configuration.port)/\(configuration.database)"
        let plan = SchemaPlan(carried: migrations)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: try connectionConfiguration(configuration),
                id: 0,
                logger: logger
            )
        } catch {
            throw PostgresErrorMapping.connectFailure(error, target: target)
        }
        do {
            let applied = try await PostgresMigrator.migrate(connection, plan: plan, step: schema, logger: logger)
            if !applied.isEmpty { logger.info("migrated the PostgreSQL schema", metadata: ["applied": .string(applied.joined(separator: ", "))]) }
        } catch {
            try? await connection.close()
            if error is StorageError { throw error }
            throw PostgresErrorMapping.map(error, target: target)
        }
        try? await connection.close()
        let engine = try PostgresStorageEngine(
            configuration: configuration,
            plan: plan,
            target: target,
            logger: logger,
            clock: clock ?? EventLoopClock(group: PostgresClient.defaultEventLoopGroup)
        )
        engine.armSchemaWatch()
        return engine
    }

    private func schemaTooNew(_ found: Int) -> StorageError {
        .schemaTooNew(found: found, known: plan.known)
    }

    /// The periodic schema check: one timer at a time, or the check it started; none once stopped.
    private struct SchemaWatch {
        var timer: ScheduledTimer?
        var check: Task<Void, Never>?
        var stopped = false
    }

    /// Schedules the next schema check, `schemaCheckInterval` from now (see
    /// `PostgresStorageConfiguration.schemaCheckInterval`). A check that finds the schema still known arms the next.
    private func armSchemaWatch() {
        let timer = clock.schedule(after: configuration.schemaCheckInterval) { [weak self] in self?.startSchemaCheck() }
        let armed = schemaWatch.withLock { w -> Bool in
            guard !w.stopped else { return false }
            w.timer = timer
            return true
        }
        if !armed { timer.cancel() }
    }

    /// Runs `checkSchema` in a task of its own (a timer's body must not wait), then arms the next check unless the
    /// schema was found too new.
    private func startSchemaCheck() {
        schemaWatch.withLock { w in
            guard !w.stopped else { return }
            w.timer = nil
            w.check = Task { [weak self] in
                guard let self, await self.checkSchema() else { return }
                self.armSchemaWatch()
            }
        }
    }

    /// Returns once the schema check started by the last timer, if any, has ended (and armed the next one).
    func schemaCheckEnded() async {
        let check = schemaWatch.withLock { $0.check }
        await check?.value
    }

    /// Stops the schema watch: cancels its timer and a check under way.
    private func stopSchemaWatch() {
        let (timer, check) = schemaWatch.withLock { w in
            w.stopped = true
            defer { (w.timer, w.check) = (nil, nil) }
            return (w.timer, w.check)
        }
        timer?.cancel()
        check?.cancel()
    }

    /// Whether this build can still run on the schema (true also when it cannot be read now: a fault of its own).
    /// A newer instance's `.expand` migrations leave it running; a contract migration it does not know does not. When
    /// it cannot, the engine refuses every later request and logs why, once.
    @discardableResult
    func checkSchema() async -> Bool {
        let logger = self.logger
        let plan = self.plan
        let refusal = try? await perform(write: false) { connection in
            try await PostgresMigrator.tooNew(connection, plan: plan, logger: logger)
        }
        guard case .schemaTooNew(let found, _)? = refusal ?? nil else { return true }
        newerSchema.store(found, ordering: .relaxed)
        let error = schemaTooNew(found)
        faults.failed(error)
        logger.critical("this instance stops serving", metadata: ["error": .string(error.description)])
        return false
    }

    private init(configuration: PostgresStorageConfiguration, plan: SchemaPlan, target: String, logger: Logger, clock: any TimePort) throws {
        self.configuration = configuration
        self.plan = plan
        self.target = target
        self.logger = logger
        self.clock = clock
        var config = PostgresClient.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            tls: Self.clientTLS(configuration.tls)
        )
        // At least one connection is kept, up to `poolSize`. Not a fixed pool (minimum = maximum), though that saves
        // arming an idle timer at each release: postgres-nio 1.33's pool then stops the process on a precondition
        // (`createNewDemandConnectionIfPossible`, minimum <= active) when a lease comes after its connection circuit
        // breaker dropped the connections backing off during a PostgreSQL restart; the one connection it keeps
        // retrying satisfies a minimum of one. The pool's own keep-alive query is off, and PostgreSQL's TCP
        // keep-alives (`sessionLimits`) keep idle connections' paths through NAT open instead.
        config.options.maximumConnections = configuration.poolSize
        config.options.minimumConnections = 1
        config.options.keepAliveBehavior = nil
        config.options.connectTimeout = configuration.connectTimeout
        config.options.additionalStartupParameters = Self.sessionLimits
        let client = PostgresClient(configuration: config, backgroundLogger: Self.poolLogger(logger))
        self.client = client
        runTask = Task { await client.run() }
    }

    /// What postgres-nio's pool may log: warnings and worse, unless the operator asked for debug lines. It logs every
    /// failed connection attempt at `info`, the ones it makes while closing (`clientClosedConnection`) included, so a
    /// successful `migrate` ended on lines that read as errors. A PostgreSQL that cannot be reached is reported by
    /// PushRelay's own lines (the storage fault log and `/ready`), once, in words an operator can act on.
    static func poolLogger(_ logger: Logger) -> Logger {
        var pool = logger
        if pool.logLevel > .debug { pool.logLevel = max(pool.logLevel, .warning) }
        return pool
    }

    deinit {
        runTask.cancel()
        stopSchemaWatch()
    }

    /// Set on every connection, so that nothing waits on PostgreSQL for ever: a lock wait ends after 5 s, and a
    /// transaction left open by a client that went away is ended by the server after 10 s (its locks with it).
    /// PostgreSQL sends a TCP keep-alive after 30 s without traffic (then every 10 s, giving up after 3 unanswered):
    /// an idle pooled connection stays known to NAT and firewalls between the instance and the database, and the
    /// server ends the session of an instance that vanished. (Ignored over Unix sockets, where neither applies.)
    static let sessionLimits: [(String, String)] = [
        ("lock_timeout", "5s"), ("idle_in_transaction_session_timeout", "10s"),
        ("tcp_keepalives_idle", "30"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "3"),
    ]

    /// How many batches of one kind (reservations, channel look-ups, bindings) may run at once: a quarter of the pool,
    /// at least one and at most `atMost`, so that the batchers together leave connections for every other statement.
    func batchesAtOnce(atMost: Int) -> Int {
        min(atMost, max(1, configuration.poolSize / 4))
    }

    // MARK: Running statements

    private struct NoConnection: Error {}

    /// The pooled connection was closed before its statement was sent.
    private struct ConnectionLost: Error {}

    /// How long a request waits for a connection while a fault is known: the pool keeps reconnecting in the
    /// background, and meanwhile requests get their 503 at once instead of after the whole `connectionWait`.
    static let faultConnectionWait = Duration.milliseconds(250)

    /// How long a statement on the request path may take. Every statement a request runs ends well within it
    /// (`lock_timeout` is 5 s); one that gets no answer at all (its connection lost as PostgreSQL stopped, in a way
    /// the client did not notice) must not hold its request, and every request batched behind it, for ever.
    static let statementLimit = Duration.seconds(10)

    /// No answer within the statement's limit.
    private struct NoAnswer: Error {
        let limit: Duration
    }

    /// Runs `body` on a pooled connection. Waits at most `connectionWait` for the connection (`faultConnectionWait`
    /// during a fault), and at most `limit` for `body` once it has one (nil: no limit, for maintenance such as
    /// pruning and copying; a body is not cancelled with its request), maps errors to `PostgresStoreError`, and keeps
    /// `health` and the counters. `write`: a success ends a fault, as in the SQLite engine (reads can succeed while
    /// writes fail).
    package func perform<T: Sendable>(
        write: Bool,
        limit: Duration? = PostgresStorageEngine.statementLimit,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard !closed.load(ordering: .relaxed) else { throw StorageError.closed }
        let newer = newerSchema.load(ordering: .relaxed)
        if newer != 0 { throw schemaTooNew(newer) }
        let wait = faults.isFaulty ? min(configuration.connectionWait, Self.faultConnectionWait) : configuration.connectionWait
        do {
            let value = try await race(wait: wait, limit: limit, body).get()
            queries.add(1, ordering: .relaxed)
            if write { faults.succeeded() }
            return value
        } catch {
            errors.add(1, ordering: .relaxed)
            let mapped: any Error =
                if error is NoConnection {
                    PostgresStoreError.unavailable("no connection to \(target) within \(wait)")
                } else if error is ConnectionLost {
                    PostgresStoreError.unavailable("the connection to \(target) was closed; the pool opens another")
                } else if let error = error as? NoAnswer {
                    PostgresStoreError.unavailable("no answer from \(target) within \(error.limit); the connection was closed")
                } else {
                    PostgresErrorMapping.map(error, target: target)
                }
            faults.failed(mapped)
            throw mapped
        }
    }

    /// Leases a connection and runs `body` on it, answering with the first of: `body`'s result; `NoConnection` once
    /// `wait` passed without a connection; `ConnectionLost` once the connection is seen closed under `body` (checked
    /// before it starts, then by its `StatementWatch`); `NoAnswer` once `limit` passed after the lease (the connection
    /// is then closed); `CancellationError` if the caller is cancelled before the lease. Once leased, `body` runs to
    /// its end even if the caller is cancelled meanwhile: a cancelled body could leave a transaction open on a
    /// connection that goes back to the pool. A body that never ends is left behind in its task.
    ///
    /// One task runs the lease and `body`; the wait and the watch are timers on the engine's clock (on the event loops,
    /// cheap to set and to cancel, and almost all are cancelled).
    private func race<T: Sendable>(
        wait: Duration,
        limit: Duration?,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async -> Result<T, any Error> {
        let client = self.client
        let clock = self.clock
        let lease = Lease()
        let answer = FirstResult<Result<T, any Error>>()
        let request = Task {
            let result = await Result(catching: {
                try await client.withConnection { connection in
                    // The wait may have run out just as the connection came: the request is answered already.
                    guard lease.take() else { throw NoConnection() }
                    // The pool can hand out a connection that closed a moment ago (it learns of a close after the
                    // fact), and a statement written to a closed connection is never answered.
                    guard !connection.isClosed else { throw ConnectionLost() }
                    let watch = StatementWatch(connection: connection, limit: limit, clock: clock) { verdict in
                        switch verdict {
                        case .connectionClosed:
                            answer.offer(.failure(ConnectionLost()))
                        case .limitPassed(let limit):
                            guard answer.offer(.failure(NoAnswer(limit: limit))) else { return }
                            connection.close().whenComplete { _ in }
                        }
                    }
                    defer { watch.stop() }
                    return try await body(connection)
                }
            })
            answer.offer(result)
        }
        let waitTimer = clock.schedule(after: wait) {
            guard lease.giveUp() else { return }
            answer.offer(.failure(NoConnection()))
            request.cancel()
        }
        defer { waitTimer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { answer.start($0) }
        } onCancel: {
            guard lease.giveUp() else { return }
            answer.offer(.failure(CancellationError()))
            request.cancel()
        }
    }

    /// Runs `body` in a transaction on a pooled connection (see `perform`).
    func transaction<T: Sendable>(
        limit: Duration? = PostgresStorageEngine.statementLimit,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        return try await perform(write: true, limit: limit) { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// Runs one statement and returns its rows.
    @discardableResult
    func rows(_ query: PostgresQuery, write: Bool) async throws -> [PostgresRow] {
        let logger = self.logger
        return try await perform(write: write) { connection in try await connection.query(query, logger: logger).collect() }
    }

    /// Runs one prepared statement and returns its decoded rows. postgres-nio prepares it on each pooled connection
    /// the first time that connection runs it (a Parse of its own), and afterwards sends only its parameters: PostgreSQL
    /// neither parses nor plans it again. For the statements of the request path, whose text does not depend on the
    /// request (batches pass arrays: `PostgresTextArray`).
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement, write: Bool) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        let logger = self.logger
        return try await perform(write: write) { connection in
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// Runs one statement that ends in `RETURNING 1` and returns how many rows it changed.
    func changes(_ query: PostgresQuery) async throws -> Int {
        try await rows(query, write: true).count
    }

    // MARK: StorageEngine

    /// Returns once every write started before the call is done (writes on the request path are awaited already;
    /// this waits for the fire-and-forget ones).
    public func flush() async throws {
        await inFlight.wait()
    }

    /// How long `flushAndClose` waits for the pool to close its connections before it leaves the pool.
    static let closeLimit = Duration.seconds(10)

    /// Waits for the writes in flight, then stops the pool. Later requests fail with `StorageError.closed`.
    /// Returns once the pool has closed, or after `closeLimit` on the engine's clock with a warning: a connection
    /// stuck on a dead peer does not hold the shutdown.
    public func flushAndClose() async throws {
        await inFlight.wait()
        // Gone from the live instances at once (the others settle its messages, `migrate --finish` no longer waits
        // for it), rather than after its heartbeat goes stale.
        let id = instanceID
        _ = try? await perform(write: true, limit: .seconds(2)) { connection in
            try await connection.query("DELETE FROM instances WHERE id = \(id)", logger: self.logger).collect()
        }
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        stopSchemaWatch()
        runTask.cancel()
        let runTask = self.runTask
        let closedInTime = FirstResult<Bool>()
        let giveUp = clock.schedule(after: Self.closeLimit) { closedInTime.offer(false) }
        // Left behind, still waiting, if the pool never closes.
        Task {
            await runTask.value
            closedInTime.offer(true)
        }
        let stopped = await withCheckedContinuation { closedInTime.start($0) }
        giveUp.cancel()
        if !stopped { logger.warning("the PostgreSQL pool did not close within \(Self.closeLimit); leaving it") }
    }

    public var health: StorageHealth { faults.current }

    /// Inserts and deletes a probe row in one transaction.
    @discardableResult
    public func probe() async -> StorageHealth {
        let stamp = ISO8601UTC.string(Date())
        let logger = self.logger
        _ = try? await transaction { connection in
            try await connection.query("INSERT INTO storage_probe (at) VALUES (\(stamp))", logger: logger)
            try await connection.query("DELETE FROM storage_probe", logger: logger)
        }
        return health
    }

    /// The names `statistics()` exports (the dashboard's PostgreSQL row queries them).
    public static let statisticNames = ["pushrelay_postgres_queries", "pushrelay_postgres_errors"]

    public func statistics() -> [(name: String, help: String, value: Double)] {
        [
            (
                Self.statisticNames[0], "PostgreSQL requests (statements or transactions) completed since start.",
                Double(queries.load(ordering: .relaxed))
            ),
            (Self.statisticNames[1], "PostgreSQL requests that failed since start.", Double(errors.load(ordering: .relaxed))),
        ]
    }

    /// The versions recorded in `schema_migrations`.
    public func appliedMigrations() async throws -> [(version: Int, name: String, appliedAt: String)] {
        try await rows("SELECT version, name, applied_at FROM schema_migrations ORDER BY version", write: false).map {
            let (v, n, a) = try $0.decode((Int, String, String).self)
            return (v, n, a)
        }
    }

    // MARK: Configuration

    static func clientTLS(_ mode: PostgresStorageConfiguration.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: return .disable
        case .prefer: return .prefer(.makeClientConfiguration())
        case .require: return .require(.makeClientConfiguration())
        }
    }

    static func connectionConfiguration(_ c: PostgresStorageConfiguration) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch c.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var config = PostgresConnection.Configuration(
            host: c.host,
            port: c.port,
            username: c.username,
            password: c.password,
            database: c.database,
            tls: tls
        )
        config.options.connectTimeout = .nanoseconds(
            Int64(c.connectTimeout.components.seconds) * 1_000_000_000 + c.connectTimeout.components.attoseconds / 1_000_000_000
        )
        return config
    }
}

/// Whether a request got its connection or gave up waiting for one, whichever came first.
private final class Lease: Sendable {
    private enum State {
        case waiting
        case leased
        case gaveUp
    }

    private let state = Mutex(State.waiting)

    /// Takes the connection that came, unless the request gave up first.
    func take() -> Bool {
        state.withLock { s in
            guard case .waiting = s else { return false }
            s = .leased
            return true
        }
    }

    /// Gives up waiting, unless the connection came first.
    func giveUp() -> Bool {
        state.withLock { s in
            guard case .waiting = s else { return false }
            s = .gaveUp
            return true
        }
    }
}
