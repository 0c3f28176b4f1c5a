import Testing

@testable import PushRelayPostgres

/// The placeholders every multi-row statement (reservations, look-ups, delivery-log rows) is written with.
@Suite struct PostgresRowsTests {
    @Test func placeholdersAreNumberedOnAcrossRowsAfterTheLeadingOnes() {
        #expect(PostgresRows.valuesPlaceholders(rows: 2, types: ["bigint", "text"], after: 1) == "($2::bigint, $3::text), ($4::bigint, $5::text)")
        #expect(PostgresRows.valuesPlaceholders(rows: 2, types: ["", ""]) == "($1, $2), ($3, $4)")
        #expect(PostgresRows.valuesPlaceholders(rows: 1, types: ["text"]) == "($1::text)")
    }
}
