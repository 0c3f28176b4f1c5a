import PostgresNIO
import PushRelayTestHarness
import Testing

@testable import PushRelayPostgres

/// The `text[]` parameter of the batched statements: NULL elements stay NULL, every string arrives as written, and an
/// empty array is an empty array; and a prepared statement that takes it runs again and again on one connection.
@Suite(.enabled(if: PostgresTestServer.enabled, Comment(rawValue: PostgresTestServer.skipMessage)))
struct PostgresTextArrayTests {
    struct Unnest: PostgresPreparedStatement {
        typealias Row = (Int, String?)
        static let sql = "SELECT i::bigint, x FROM unnest($1::text[]) WITH ORDINALITY AS a (x, i) ORDER BY i"

        var elements: [String?]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(PostgresTextArray(elements))
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((Int, String?).self) }
    }

    @Test func elementsAndNullsArriveInOrderThroughAPreparedStatement() async throws {
        var config = try await PostgresTestDatabase.create().configuration()
        config.poolSize = 1
        let engine = try await PostgresStorageEngine.open(config, logger: PostgresTestServer.logger)
        let cases: [[String?]] = [
            ["a", nil, "ünïcode ✓", "", nil],
            [nil],
            ["only"],
            [],
            [String(repeating: "x", count: 10_000), "tok:en"],
        ]
        // Twice: the second round runs the statement prepared by the first on the same connection.
        for _ in 0..<2 {
            for elements in cases {
                let rows = try await engine.execute(Unnest(elements: elements), write: false)
                #expect(rows.map(\.0) == Array(elements.indices.map { $0 + 1 }))
                #expect(rows.map(\.1) == elements)
            }
        }
        try await engine.flushAndClose()
    }
}
