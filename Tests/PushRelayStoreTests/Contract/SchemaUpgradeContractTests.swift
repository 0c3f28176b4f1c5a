import Foundation
import PushRelayCore
import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore
import PushRelayTestHarness
import Testing

/// The rolling-upgrade rules (`SchemaPlan`) as each engine carries them out: a newer build stands in as this build's
/// migrations plus one `.expand` and one `.contract` migration.
@Suite struct SchemaUpgradeContractTests {
    static let day = UTCDay(string: "2026-11-21")!
    static let policy = QuotaPolicy(dailyLimit: 10)

    /// One database of an engine, opened again and again with a build's migrations and a `SchemaStep`.
    struct Place: Sendable {
        let engine: StorageEngineUnderTest
        let sqlitePath: String
        let postgres: PostgresStorageConfiguration?

        static func make(_ engine: StorageEngineUnderTest) async throws -> Place {
            switch engine {
            case .sqlite: Place(engine: engine, sqlitePath: TempPath.make(), postgres: nil)
            case .postgres: Place(engine: engine, sqlitePath: "", postgres: try await PostgresTestDatabase.create().configuration())
            }
        }

        var carried: [Migration] {
            engine == .sqlite ? PushRelayDatabase.migrations : PostgresStorageEngine.migrations
        }

        /// This build's migrations and the two a newer build adds.
        var newer: [Migration] { NewerBuild.migrations(after: carried) }

        /// Opens the database with `migrations` and `step`; returns the names applied now (SQLite) and the storage.
        func open(_ migrations: [Migration], _ step: SchemaStep) async throws -> Storage {
            switch engine {
            case .sqlite:
                let db = try PushRelayDatabase(path: sqlitePath)
                do {
                    try db.migrate(migrations, step: step)
                } catch {
                    try? db.close()
                    throw error
                }
                return .sqlite(db)
            case .postgres:
                return try await Storage.postgres(try #require(postgres), schema: step, migrations: migrations, logger: PostgresTestServer.logger)
            }
        }

        func versions(_ storage: Storage) async throws -> [Int] { try await storage.engine.appliedMigrations().map(\.version) }
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func anOlderBuildKeepsServingAfterAnExpandMigration(engine: StorageEngineUnderTest) async throws {
        let place = try await Place.make(engine)
        let old = try await place.open(place.carried, .upgrade)
        _ = try await old.quota.reserve(pushToken: "t", appID: nil, day: Self.day, policy: Self.policy, now: Self.day.start)

        // The newer build starts: its expand migration is applied, its contract migration waits.
        let new = try await place.open(place.newer, .upgrade)
        let known = place.carried.last!.version
        #expect(try await place.versions(new).max() == known + 1)

        // The older build's instance that was running keeps counting, and another one can start and read.
        _ = try await old.quota.reserve(pushToken: "t", appID: nil, day: Self.day, policy: Self.policy, now: Self.day.start)
        let another = try await place.open(place.carried, .upgrade)
        let reading = try await place.open(place.carried, .check)
        _ = try await new.quota.reserve(pushToken: "t", appID: nil, day: Self.day, policy: Self.policy, now: Self.day.start)
        let limits = try await reading.quota.rateLimits(pushToken: "t", appID: nil, day: Self.day, policy: Self.policy)
        #expect(limits.successful == 3)
        for s in [old, new, another, reading] { try await s.engine.flushAndClose() }
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func finishingAppliesTheContractMigrationAndThenTheOlderBuildIsRefused(engine: StorageEngineUnderTest) async throws {
        let place = try await Place.make(engine)
        try await place.open(place.carried, .upgrade).engine.flushAndClose()
        try await place.open(place.newer, .upgrade).engine.flushAndClose()
        let finished = try await place.open(place.newer, .finish)
        let known = place.carried.last!.version
        #expect(try await place.versions(finished).max() == known + 2)
        try await finished.engine.flushAndClose()

        for step in [SchemaStep.check, .upgrade] {
            let error = await #expect(throws: StorageError.self) { try await place.open(place.carried, step) }
            #expect(error == .schemaTooNew(found: known + 1, known: known))
            #expect(error?.description.contains("migrate --finish") == true)
        }
        // The newer build itself, and a newer one still, run on it.
        try await place.open(place.newer, .check).engine.flushAndClose()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aNewDatabaseGetsEveryMigrationAtOnce(engine: StorageEngineUnderTest) async throws {
        let place = try await Place.make(engine)
        let storage = try await place.open(place.newer, .upgrade)
        #expect(try await place.versions(storage) == place.newer.map(\.version))
        try await storage.engine.flushAndClose()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aCommandThatDoesNotMigrateRefusesAnOlderSchema(engine: StorageEngineUnderTest) async throws {
        let place = try await Place.make(engine)
        let known = place.carried.last!.version
        try await place.open(Array(place.carried.dropLast()), .upgrade).engine.flushAndClose()
        let error = await #expect(throws: StorageError.self) { try await place.open(place.carried, .check) }
        #expect(error == .schemaTooOld(found: known - 1, needs: known))
        #expect(error?.description.contains("pushrelay migrate") == true)
        // Nothing was applied by the refused command; `migrate` then does it.
        let upgraded = try await place.open(place.carried, .upgrade)
        #expect(try await place.versions(upgraded).max() == known)
        try await upgraded.engine.flushAndClose()
    }

    @Test(arguments: StorageEngineUnderTest.all)
    func aDatabaseFromBeforeTheRulesIsRead(engine: StorageEngineUnderTest) async throws {
        let place = try await Place.make(engine)
        try await place.open(place.carried, .upgrade).engine.flushAndClose()
        // A release before the rules recorded no `requires`: every row counts as its own version.
        let drop = "ALTER TABLE schema_migrations DROP COLUMN requires"
        switch engine {
        case .sqlite:
            let db = try PushRelayDatabase(path: place.sqlitePath)
            try await db.pool.write { try $0.execute(sql: drop) }
            try await db.flushAndClose()
        case .postgres:
            let config = try #require(place.postgres)
            try await PostgresTestServer.psql(drop, on: try await PostgresTestServer.require(), database: config.database)
        }
        try await place.open(place.carried, .check).engine.flushAndClose()
        let new = try await place.open(place.newer, .upgrade)
        try await new.engine.flushAndClose()
        // The older build still runs after the newer one's expand migration.
        try await place.open(place.carried, .check).engine.flushAndClose()
    }
}
