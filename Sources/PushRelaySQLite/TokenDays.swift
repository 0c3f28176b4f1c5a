import PushRelayStore

/// Reading one push token's rows across days without an index on `push_token` (migration 006 dropped it from the
/// write path). `days` walks the distinct days of `daily_usage` newest first, one primary-key seek each (a loose
/// index scan: there are only `retention_days` of them), and a join on `(day, push_token)` then does one point
/// lookup per day.
enum TokenDays {
    static let cte = """
        WITH RECURSIVE days(day) AS (
            SELECT max(day) FROM daily_usage
            UNION ALL
            SELECT (SELECT max(day) FROM daily_usage WHERE day < days.day) FROM days WHERE days.day IS NOT NULL
        )
        """

    /// The newest non-null value of a `daily_usage` column for the token bound as `?1`.
    static func latest(_ column: String) -> String {
        """
        \(cte)
        SELECT u.\(column) FROM days CROSS JOIN daily_usage u ON u.day = days.day AND u.push_token = ?1
        WHERE u.\(column) IS NOT NULL ORDER BY days.day DESC LIMIT 1
        """
    }
}
