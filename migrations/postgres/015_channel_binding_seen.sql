-- migration: expand
-- When Home Assistant last sent each channel binding's pair (`seen_at`, an ISO 8601 time like `bound_at`): the prune
-- deletes the bindings not sent for `quota.retention_days`, by the index on `coalesce(seen_at, bound_at)` (an older
-- binary writes rows without `seen_at`; their `bound_at` counts then). pushrelay_bind (and so pushrelay_bind_many)
-- now also sets `seen_at`, when it writes the pair and when the pair is stored already; what it returns is unchanged.
ALTER TABLE channel_bindings ADD COLUMN seen_at TEXT;
UPDATE channel_bindings SET seen_at = bound_at;
CREATE INDEX channel_bindings_by_seen ON channel_bindings ((coalesce(seen_at, bound_at)));

CREATE OR REPLACE FUNCTION pushrelay_bind(p_token TEXT, p_webhook TEXT, p_stamp TEXT)
RETURNS TABLE (former_token TEXT, former_webhook TEXT)
LANGUAGE plpgsql AS $bind$
DECLARE
    k TEXT;
BEGIN
    FOREACH k IN ARRAY (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY['t:' || p_token, 'w:' || p_webhook]) AS x) LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(k, 0));
    END LOOP;
    RETURN QUERY
        SELECT b.push_token, b.webhook_id FROM channel_bindings b
        WHERE (b.push_token = p_token OR b.webhook_id = p_webhook) AND NOT (b.push_token = p_token AND b.webhook_id = p_webhook);
    IF FOUND OR NOT EXISTS (SELECT 1 FROM channel_bindings b WHERE b.push_token = p_token AND b.webhook_id = p_webhook) THEN
        DELETE FROM channel_bindings b WHERE b.push_token = p_token OR b.webhook_id = p_webhook;
        INSERT INTO channel_bindings (push_token, webhook_id, bound_at, seen_at) VALUES (p_token, p_webhook, p_stamp, p_stamp);
    ELSE
        UPDATE channel_bindings b SET seen_at = p_stamp WHERE b.push_token = p_token;
    END IF;
END
$bind$;
