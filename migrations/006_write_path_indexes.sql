-- Fewer indexes on the per-request write path. Each index on a random key costs one more B-tree page written per
-- request and group commit; the benchmark (Benchmarks/run.sh) measured about 18% more notifications per second without
-- these two.
--
-- daily_usage_by_token: lookups of a token across days now walk the few distinct days through the primary key
-- (day, push_token) instead, one index seek per day (a "loose index scan"; see QuotaStore.tokenDaysSQL).
-- delivery_log_by_token: only the admin view of recent deliveries filtered by token used it; that scan now walks the
-- log backwards by id, which stops as soon as it has enough rows for an active token.
DROP INDEX IF EXISTS daily_usage_by_token;
DROP INDEX IF EXISTS delivery_log_by_token;
