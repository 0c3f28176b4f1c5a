import Testing

@testable import PushRelayPostgres

/// Which strings a statement can carry: PostgreSQL's `text` refuses NUL, and with it the whole statement.
@Suite struct PostgresTextTests {
    @Test func nulIsTheOneCharacterTextCannotHold() {
        #expect(PostgresText.canHold("tok:en", nil, "hook-1", "ünïcode ✓"))
        #expect(PostgresText.canHold())
        #expect(!PostgresText.canHold("tok", "ho\u{0}ok"))
        #expect(!PostgresText.canHold("\u{0}"))
    }
}
