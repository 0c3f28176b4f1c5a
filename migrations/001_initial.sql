-- PushRelay schema v1: per-token daily quota ledger, per-token limit overrides, delivery log.
-- Days are UTC calendar days written as 'YYYY-MM-DD'; timestamps are ISO-8601 UTC strings.

-- One row per push token per UTC day. Only `successful` gates: a request is refused once successful >= limit.
-- `successful` includes slots reserved for deliveries still in flight; a failed delivery moves its slot to `errors`.
CREATE TABLE daily_usage (
    day         TEXT    NOT NULL,
    push_token  TEXT    NOT NULL,
    app_id      TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0,   -- every counted request, refused ones included
    successful  INTEGER NOT NULL DEFAULT 0,   -- delivered (or reserved and in flight)
    errors      INTEGER NOT NULL DEFAULT 0,   -- failed deliveries
    notice_sent INTEGER NOT NULL DEFAULT 0,   -- 1 once the "rate limited" notice went out this day
    updated_at  TEXT    NOT NULL,
    PRIMARY KEY (day, push_token)
) WITHOUT ROWID;

CREATE INDEX daily_usage_by_token ON daily_usage (push_token, day);

-- Per-token limit overrides, managed with `pushrelay quota set-limit` or PUT /admin/v1/limits/{token}.
CREATE TABLE token_limits (
    push_token  TEXT    PRIMARY KEY,
    daily_limit INTEGER NOT NULL CHECK (daily_limit >= 0),
    updated_at  TEXT    NOT NULL
) WITHOUT ROWID;

-- Every delivery attempt that reached a provider (and every sandbox would-be delivery, with its payload).
CREATE TABLE delivery_log (
    id            INTEGER PRIMARY KEY,
    at            TEXT    NOT NULL,
    day           TEXT    NOT NULL,
    push_token    TEXT    NOT NULL,
    app_id        TEXT,
    platform      TEXT,
    provider      TEXT    NOT NULL,
    kind          TEXT    NOT NULL,             -- notification | rate_limit_notice
    counted       INTEGER NOT NULL,             -- 0 for exempt notifications and notices
    outcome       TEXT    NOT NULL,             -- delivered | invalid_token | payload_too_large | invalid_payload | transient | configuration
    message_id    TEXT,
    error_message TEXT,
    payload       TEXT                          -- JSON sent upstream (sandbox provider only)
);

CREATE INDEX delivery_log_by_day ON delivery_log (day);
CREATE INDEX delivery_log_by_token ON delivery_log (push_token, id);

-- Convenience for admins: usage with the limit override, if any.
CREATE VIEW usage_with_limits AS
    SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.successful + u.errors AS total,
           u.notice_sent, l.daily_limit AS limit_override, u.updated_at
    FROM daily_usage u LEFT JOIN token_limits l ON l.push_token = u.push_token;
