-- Write-behind usage counters. A sandbox delivery's log row is also its quota record: it is written with
-- pending_usage = 1 in the request's own group commit, and the writer folds such rows into daily_usage in bulk, in key
-- order, about once a second (one B-tree page per run of tokens instead of one random page per request; measured in
-- README "Benchmark"). Until then the row holds the count without them.
--
-- Exact counts at any moment: daily_usage_current (and usage_with_limits, built on it) add the pending rows. A row of
-- daily_usage includes every pending log row of its day and token with id <= its folded_log_id; every pending row with
-- id <= usage_fold.folded_through is included in its daily_usage row. Opening the database (and the CLI's quota
-- commands) fold whatever a crash left pending.
ALTER TABLE delivery_log ADD COLUMN pending_usage INTEGER NOT NULL DEFAULT 0;

-- With one log row per request, the index on day was one more B-tree written per request and one more WAL frame per
-- group commit (measured: 6-18% of notify throughput, Benchmarks/run.sh). Pruning finds the day boundary by id
-- instead: the log is appended in time order (QuotaStore.prune).
DROP INDEX IF EXISTS delivery_log_by_day;
ALTER TABLE daily_usage ADD COLUMN folded_log_id INTEGER NOT NULL DEFAULT 0;

CREATE TABLE usage_fold (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    folded_through INTEGER NOT NULL
);
INSERT INTO usage_fold (id, folded_through) VALUES (1, coalesce((SELECT max(id) FROM delivery_log), 0));

-- daily_usage with the counts still pending in the delivery log: what an admin should read.
CREATE VIEW daily_usage_current AS
    WITH pending AS (
        SELECT l.day, l.push_token, count(*) AS n, max(l.at) AS at, max(l.id) AS last
        FROM delivery_log l JOIN daily_usage u ON u.day = l.day AND u.push_token = l.push_token
        WHERE l.id > (SELECT folded_through FROM usage_fold) AND l.pending_usage = 1 AND l.id > u.folded_log_id
        GROUP BY l.day, l.push_token)
    SELECT u.day, u.push_token, u.app_id, u.webhook_id,
           u.attempts + coalesce(p.n, 0) AS attempts, u.successful + coalesce(p.n, 0) AS successful, u.errors,
           u.notice_sent, max(u.updated_at, coalesce(p.at, '')) AS updated_at,
           u.local_delivered, u.local_fallbacks, u.local_dropped, coalesce(p.n, 0) AS pending, p.last AS pending_last_id
    FROM daily_usage u LEFT JOIN pending p ON p.day = u.day AND p.push_token = u.push_token;

DROP VIEW usage_with_limits;
CREATE VIEW usage_with_limits AS
    SELECT u.day, u.push_token, u.app_id, u.attempts, u.successful, u.errors, u.successful + u.errors AS total,
           u.notice_sent, l.daily_limit AS limit_override, u.updated_at
    FROM daily_usage_current u LEFT JOIN token_limits l ON l.push_token = u.push_token;
