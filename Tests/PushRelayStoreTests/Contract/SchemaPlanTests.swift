import PushRelayPostgres
import PushRelaySQLite
import PushRelayStore
import Testing

/// The rolling-upgrade rules, without a database.
@Suite struct SchemaPlanTests {
    static let carried = [
        Migration(version: 1, name: "001", sql: "CREATE TABLE a (x INTEGER);"),
        Migration(version: 2, name: "002", sql: "-- migration: expand\nALTER TABLE a ADD COLUMN y TEXT;"),
        Migration(version: 3, name: "003", sql: "-- A comment first.\n-- migration: contract, requires 2\nALTER TABLE a DROP COLUMN x;"),
    ]
    let plan = SchemaPlan(carried: Self.carried)

    static func applied(_ rows: (Int, Int?)...) -> [AppliedMigration] { rows.map { AppliedMigration(version: $0.0, requires: $0.1) } }

    @Test func eachMigrationDeclaresItsKindInALine() {
        #expect(Self.carried.map(\.kind) == [.breaking, .expand, .contract(requires: 2)])
        #expect(Migration(version: 4, name: "004", sql: "-- migration: contract\nDROP TABLE a;").kind == .breaking)
        #expect(Migration(version: 4, name: "004", sql: "-- migration: shrink\nDROP TABLE a;").kind == .breaking)
        #expect(Self.carried.map { $0.kind.requires(version: $0.version) } == [1, 0, 2])
    }

    @Test func theDatabaseRequiresTheHighestRequirementOfItsMigrations() {
        #expect(SchemaPlan.required(by: []) == 0)
        #expect(SchemaPlan.required(by: Self.applied((1, 1), (2, 0))) == 1)
        // Rows from before the rules count as their own version.
        #expect(SchemaPlan.required(by: Self.applied((1, nil), (2, nil))) == 2)
        #expect(SchemaPlan.required(by: Self.applied((1, 1), (2, 0), (3, 2))) == 2)
    }

    @Test func aBuildRunsOnEverySchemaThatRequiresWhatItKnows() {
        let older = SchemaPlan(carried: Array(Self.carried.prefix(1)))
        #expect(older.tooNew(Self.applied((1, 1), (2, 0))) == nil)
        #expect(older.tooNew(Self.applied((1, 1), (2, 0), (3, 2))) == .schemaTooNew(found: 2, known: 1))
        #expect(plan.tooNew(Self.applied((1, 1), (2, 0), (3, 2), (9, 0))) == nil)
        #expect(plan.tooNew(Self.applied((1, 1), (9, 9))) == .schemaTooNew(found: 9, known: 3))
    }

    @Test func upgradingWaitsForContractsExceptOnANewDatabase() {
        #expect(plan.pending([], step: .upgrade).map(\.version) == [1, 2, 3])
        #expect(plan.pending(Self.applied((1, 1)), step: .upgrade).map(\.version) == [2])
        #expect(plan.pending(Self.applied((1, 1)), step: .finish).map(\.version) == [2, 3])
        #expect(plan.pending(Self.applied((1, 1)), step: .check).isEmpty)
        #expect(plan.finishNeeds(Self.applied((1, 1), (2, 0))) == 2)
        #expect(plan.finishNeeds(Self.applied((1, 1), (2, 0), (3, 2))) == nil)
    }

    @Test func aCommandThatDoesNotMigrateNeedsWhatServeWouldApply() {
        #expect(plan.tooOld(Self.applied((1, 1))) == .schemaTooOld(found: 1, needs: 2))
        #expect(plan.tooOld([]) == .schemaTooOld(found: 0, needs: 3))
        // A contract migration still pending is no reason to refuse: the build runs before it and after it.
        #expect(plan.tooOld(Self.applied((1, 1), (2, 0))) == nil)
    }

    /// Every migration after the ones that predate the rules says whether older instances can live with it, so that
    /// no release makes the running instances stop by accident.
    @Test(arguments: ["sqlite", "postgres"])
    func everyNewMigrationDeclaresItsKind(engine: String) {
        let migrations = engine == "sqlite" ? PushRelayDatabase.migrations : PostgresStorageEngine.migrations
        for m in migrations where m.version > 14 {
            #expect(m.kind != .breaking, "\(engine) migration \(m.name) needs a '-- migration: expand' or '-- migration: contract, requires N' line")
        }
    }
}
