-- migration: expand
-- When Home Assistant last sent each channel binding's pair (`seen_at`, an ISO 8601 time like `bound_at`): the prune
-- deletes the bindings not sent for `quota.retention_days`, by the index on `coalesce(seen_at, bound_at)` (an older
-- binary writes rows without `seen_at`; their `bound_at` counts then).
ALTER TABLE channel_bindings ADD COLUMN seen_at TEXT;
UPDATE channel_bindings SET seen_at = bound_at;
CREATE INDEX channel_bindings_by_seen ON channel_bindings (coalesce(seen_at, bound_at));
