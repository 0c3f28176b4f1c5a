import PushRelayStore

/// A newer build's migrations, for tests of rolling upgrades: `carried` (this build's) and two more, one of each kind
/// (`MigrationKind`). The SQL works on SQLite and PostgreSQL alike.
///
/// - the `.expand` one adds a nullable column to `daily_usage` (written on every request) and a table;
/// - the `.contract` one (requiring the expand one) drops that table.
public enum NewerBuild {
    public static func migrations(after carried: [Migration]) -> [Migration] {
        let next = (carried.map(\.version).max() ?? 0) + 1
        return carried + [
            Migration(
                version: next,
                name: "\(next)_rollout_note",
                sql:
                    "-- migration: expand\nALTER TABLE daily_usage ADD COLUMN rollout_note TEXT;\nCREATE TABLE rollout_marks (id INTEGER PRIMARY KEY);"
            ),
            Migration(
                version: next + 1,
                name: "\(next + 1)_rollout_marks_gone",
                sql: "-- migration: contract, requires \(next)\nDROP TABLE rollout_marks;"
            ),
        ]
    }
}
