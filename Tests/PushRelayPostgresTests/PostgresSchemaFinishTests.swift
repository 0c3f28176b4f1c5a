import Foundation
import PushRelayStore
import PushRelayTestHarness
import Testing

@testable import PushRelayPostgres

/// `migrate --finish` on PostgreSQL: the contract migrations wait while an instance that does not know what they
/// require is alive (the instances table records the schema each knows), and run once none is.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)), .timeLimit(.minutes(2)))
struct PostgresSchemaFinishTests {
    @Test func finishingWaitsUntilNoOlderInstanceIsAlive() async throws {
        let database = try await PostgresTestDatabase.create()
        let config = try database.configuration()
        let carried = PostgresStorageEngine.migrations
        let known = carried.map(\.version).max() ?? 0
        let newer = NewerBuild.migrations(after: carried)

        // An instance of this build is serving; a newer one starts beside it.
        let old = try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger)
        _ = try await PostgresPushChannelRouting(engine: old).heartbeat(staleAfter: .seconds(3))
        let new = try await PostgresStorageEngine.open(config, migrations: newer, logger: PostgresTestServer.logger)
        _ = try await PostgresPushChannelRouting(engine: new).heartbeat(staleAfter: .seconds(3))
        // An instance of a release before the instances recorded their schema.
        _ = try await database.psql("INSERT INTO instances (id) VALUES ('legacy')")
        // Alive however long the steps below take on a busy machine (a live server beats every second).
        _ = try await database.psql("UPDATE instances SET heartbeat_at = now() + interval '1 hour'")

        let refused = await #expect(throws: StorageError.self) {
            try await PostgresStorageEngine.open(config, schema: .finish, migrations: newer, logger: PostgresTestServer.logger)
        }
        #expect(refused == .olderInstancesAlive(needs: known + 1, instances: [old.instanceID: known, "legacy": nil]))
        #expect(refused?.description.contains("schema unknown") == true)
        #expect(
            try await database.psql("SELECT max(version) FROM schema_migrations").trimmingCharacters(in: .whitespacesAndNewlines) == "\(known + 1)"
        )

        // The older instances stop (a graceful stop removes an instance's row; a stale heartbeat counts as stopped).
        try await old.flushAndClose()
        _ = try await database.psql("UPDATE instances SET heartbeat_at = now() - interval '1 minute' WHERE id = 'legacy'")
        let finished = try await PostgresStorageEngine.open(config, schema: .finish, migrations: newer, logger: PostgresTestServer.logger)
        #expect(try await finished.appliedMigrations().map(\.version).max() == known + 2)
        try await finished.flushAndClose()
        // The newer instance keeps serving after its own contract migration.
        #expect(await new.checkSchema())
        try await new.flushAndClose()
        try await database.drop()
    }
}
